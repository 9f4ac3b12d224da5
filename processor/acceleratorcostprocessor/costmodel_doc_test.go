package acceleratorcostprocessor

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// printed is a number as the document prints it, and the rounding that
// printing allows: half a unit of its last digit.
type printed struct {
	value, tolerance float64
}

// readWorkedExample parses the value column of the worked-example table in
// docs/cost-model.md.
func readWorkedExample(t *testing.T) map[string]printed {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "cost-model.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	begin := strings.Index(doc, "<!-- worked-example:begin -->")
	end := strings.Index(doc, "<!-- worked-example:end -->")
	if begin < 0 || end < begin {
		t.Fatal("docs/cost-model.md has no worked-example block")
	}
	values := map[string]printed{}
	for _, line := range strings.Split(doc[begin:end], "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		key := strings.Trim(strings.TrimSpace(cells[1]), "`")
		text := strings.TrimSpace(cells[len(cells)-2])
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			t.Fatalf("worked example %s: %v", key, err)
		}
		decimals := 0
		if i := strings.IndexByte(text, '.'); i >= 0 {
			decimals = len(text) - i - 1
		}
		values[key] = printed{v, 0.5*math.Pow10(-decimals) + 1e-15}
	}
	return values
}

// TestCostModelWorkedExample runs the processor on the input the worked
// example describes and checks every number the document prints.
func TestCostModelWorkedExample(t *testing.T) {
	want := readWorkedExample(t)

	cfg := createDefaultConfig().(*Config)
	// Only how soon windows and baselines are ready differs from the
	// defaults; no threshold does.
	cfg.Findings.Window = 2 * time.Minute
	cfg.Findings.MinCoverage = 0.5
	cfg.Baselines.MinSamples = 3
	h := newHarness(t, cfg)

	gib := float64(1 << 30)
	node := func(hwID string, kv ...any) resource {
		return res(append([]any{s.AttrHWID, hwID, s.AttrHWModel, "NVIDIA A100-SXM4-80GB", s.AttrPartitionType, s.PartitionNone,
			s.AttrHostType, "p4de.24xlarge", s.AttrCloudRegion, "us-east-1", s.AttrK8sNodeName, "p4de-node"}, kv...)...)
	}
	migOf := func(parent, gi, profile string) []any {
		return []any{s.AttrHWID, parent + "/gi" + gi, s.AttrHWParent, parent, s.AttrHWModel, "NVIDIA A100-SXM4-80GB",
			s.AttrPartitionType, s.PartitionMIG, s.AttrPartitionID, gi, s.AttrPartitionProfile, profile,
			s.AttrHostType, "p4de.24xlarge", s.AttrCloudRegion, "us-east-1", s.AttrK8sNodeName, "p4de-node"}
	}
	neuronCoreOf := func(i int) resource {
		id := strconv.Itoa(i)
		return res(s.AttrHWID, "neuron_device_0/neuroncore_"+id, s.AttrHWParent, "neuron_device_0", s.AttrNeuronCoreIndex, i,
			s.AttrHWModel, "inferentia2", s.AttrPartitionType, s.PartitionNeuronCore, s.AttrPartitionID, id,
			s.AttrHostType, "inf2.48xlarge", s.AttrK8sPodName, "llama-0", s.AttrK8sNamespaceName, "ml", s.MetricGPUUtilization, 0.5)
	}
	const last = 6
	input := func(i int) []resource {
		tensor := 0.50
		if i == last {
			tensor = 0.30
		}
		return []resource{
			res(s.AttrHWID, "GPU-0/gi1", s.AttrHWParent, "GPU-0", s.AttrHWModel, "NVIDIA A100-SXM4-80GB",
				s.AttrPartitionType, s.PartitionMIG, s.AttrPartitionID, "1", s.AttrPartitionProfile, "4g.40gb",
				s.AttrHostType, "p4de.24xlarge", s.AttrCloudRegion, "us-east-1", s.AttrK8sNodeName, "p4de-node",
				s.AttrWorkloadName, "pretrain", s.AttrWorkloadType, s.WorkloadTraining, s.AttrK8sNamespaceName, "ml",
				s.AttrK8sPodName, "pretrain-0", s.MetricGREngineActive, 0.8, s.MetricTensorActive, tensor),
			node("GPU-1", held("notebook", s.WorkloadInteractive, s.MetricGREngineActive, 0.02)...),
			node("GPU-2", held("embed", s.WorkloadBatch, s.MetricGREngineActive, 0.10, s.MetricGPUMemoryUsage, 6*gib, s.MetricGPUMemoryLimit, 80*gib)...),
			node("GPU-3", held("chat", s.WorkloadInference, s.MetricGREngineActive, 0.12)...),
			res(s.AttrK8sPodUID, "uid-chat", s.MetricKVCacheUtilization, 0.24, s.MetricRequestsWaiting, 0.0),
			node("GPU-4", held("etl", s.WorkloadBatch, s.MetricGREngineActive, 0.30, s.MetricGPUMemoryUsage, 8*gib, s.MetricGPUMemoryLimit, 80*gib)...),
			node("GPU-5", held("ranker", s.WorkloadBatch, s.MetricGREngineActive, 0.9)...),
			// GPU-6: 3g.40gb + 4g.40gb, 15/14 of the GPU by their own
			// shares; the receiver left the shares to the processor.
			res(append(migOf("GPU-6", "1", "3g.40gb"), held("chat", s.WorkloadInference, s.MetricGREngineActive, 0.5)...)...),
			res(append(migOf("GPU-6", "2", "4g.40gb"), s.AttrAllocationState, s.AllocationUnallocated, s.MetricGREngineActive, 0.0)...),
			// An inf2 device held whole through its cores, as the attributes
			// processor leaves it (typed neuroncore, share 1), and its cores.
			res(s.AttrHWID, "neuron_device_0", s.AttrHWModel, "inferentia2", s.AttrPartitionType, s.PartitionNeuronCore,
				s.AttrPartitionID, "0,1", s.AttrPartitionShare, 1.0, s.AttrHostType, "inf2.48xlarge",
				s.AttrK8sPodName, "llama-0", s.AttrK8sNamespaceName, "ml", s.MetricGPUMemoryUsage, 4*gib),
			neuronCoreOf(0), neuronCoreOf(1),
		}
	}
	interval := 30 * time.Second
	var before, after pmetric.Metrics
	for i := 0; i <= last; i++ {
		if i == last {
			h.sendLogs(healthEvent("GPU-5", at(time.Duration(i)*interval-time.Second), 79, s.HWStateFailed, s.ActionRebootNode))
		}
		out := h.send(at(time.Duration(i)*interval), input(i)...)
		if i == last-1 {
			before = out
		}
		after = out
	}
	delta := func(hwID, partID string) (costOut, costOut) {
		return costOf(before, hwID, partID), costOf(after, hwID, partID)
	}
	wasteDelta := func(hwID, partID, reason string) float64 {
		b, a := delta(hwID, partID)
		return a.waste[reason] - b.waste[reason]
	}
	costDelta := func(hwID, partID string) float64 {
		b, a := delta(hwID, partID)
		return a.cost - b.cost
	}
	savingOf := func(hwID, kind string) float64 {
		for _, f := range h.findingsFor(hwID) {
			if k, _ := f.Attributes().Get(s.AttrFindingKind); k.Str() == kind {
				v, _ := f.Attributes().Get(s.AttrFindingSavingMonth)
				return v.Double()
			}
		}
		return math.NaN()
	}
	got := map[string]float64{
		"price_per_gpu":       costOf(after, "GPU-1", "").price,
		"price_4g40gb":        costOf(after, "GPU-0/gi1", "").price,
		"cost_4g40gb":         costDelta("GPU-0/gi1", ""),
		"waste_training":      wasteDelta("GPU-0/gi1", "", s.WasteTrainingInefficiency),
		"price_remainder":     costOf(after, "GPU-0", remainderID).price,
		"cost_remainder":      costDelta("GPU-0", remainderID),
		"waste_fragmentation": wasteDelta("GPU-0", remainderID, s.WasteFragmentation),
		"waste_unallocated":   wasteDelta("GPU-0", remainderID, s.WasteUnallocated),
		"cost_gpu":            costDelta("GPU-1", ""),
		"waste_idle":          wasteDelta("GPU-1", "", s.WasteIdle),
		"waste_inference":     wasteDelta("GPU-3", "", s.WasteInferenceUnderutilized),
		"waste_memory":        wasteDelta("GPU-4", "", s.WasteOverprovisionedMemory),
		"waste_unavailable":   wasteDelta("GPU-5", "", s.WasteUnavailable),
		"saving_rightsizing":  savingOf("GPU-2", s.FindingRightsizing),
		"saving_unhealthy":    savingOf("GPU-5", s.FindingUnhealthyCapacity),
		"price_neuroncore":    costOf(after, "neuron_device_0/neuroncore_0", "").price,
		"price_3g40gb_fitted": costOf(after, "GPU-6/gi1", "").price,
		"price_4g40gb_fitted": costOf(after, "GPU-6/gi2", "").price,
		"price_neuron_device": costOf(after, "neuron_device_0", "").price,
	}
	if len(want) != len(got) {
		t.Errorf("the document lists %d quantities, the test computes %d", len(want), len(got))
	}
	for k, g := range got {
		w, ok := want[k]
		if !ok {
			t.Errorf("%s: not in the document", k)
			continue
		}
		if math.IsNaN(g) || math.Abs(g-w.value) > w.tolerance {
			t.Errorf("%s: the processor computes %.12g, docs/cost-model.md says %v", k, g, w.value)
		}
	}
}
