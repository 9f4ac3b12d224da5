package acceleratorcostprocessor

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/metadata"
)

func TestCostUsesDataPointTimeAndCapsGaps(t *testing.T) {
	cfg := testConfig()
	h := newHarness(t, cfg)
	r := gpu("GPU-1", held("job", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...)

	first := costOf(h.send(at(0), r), "GPU-1", "")
	if !first.found || first.cost != 0 || first.price != 1 || first.start != at(0) || first.t != at(0) {
		t.Fatalf("first sighting: %+v", first)
	}
	// The wall clock moves 1 s per batch in the harness; data time moves 90 s.
	second := costOf(h.send(at(90*time.Second), r), "GPU-1", "")
	if !near(second.cost, 90.0/3600) || second.start != at(0) || second.t != at(90*time.Second) {
		t.Fatalf("after 90 s: %+v", second)
	}
	// A two-hour gap is charged for max_interval (5 min) only.
	third := costOf(h.send(at(90*time.Second+2*time.Hour), r), "GPU-1", "")
	if !near(third.cost, 90.0/3600+5.0/60) {
		t.Fatalf("after a 2 h gap: cost %v, want %v", third.cost, 90.0/3600+5.0/60)
	}
	// A point older than the last one accrues nothing and does not move time back.
	fourth := costOf(h.send(at(time.Minute), r), "GPU-1", "")
	if fourth.cost != third.cost || fourth.t != third.t {
		t.Fatalf("out-of-order point: %+v", fourth)
	}
}

func TestRegionFallbackAndRegionalRows(t *testing.T) {
	h := newHarness(t, testConfig())
	eu := gpu("GPU-eu", s.AttrCloudRegion, "eu-west-1", s.MetricGREngineActive, 0.5)
	ap := gpu("GPU-ap", s.AttrCloudRegion, "ap-south-1", s.MetricGREngineActive, 0.5)
	out := h.send(at(0), eu, ap)
	if got := costOf(out, "GPU-eu", "").price; got != 2 {
		t.Errorf("eu-west-1 row: price %v, want 2", got)
	}
	if got := costOf(out, "GPU-ap", "").price; got != 1 {
		t.Errorf("ap-south-1 falls back to us-east-1: price %v, want 1", got)
	}
}

func TestHostTypeFromNodeLabel(t *testing.T) {
	h := newHarness(t, testConfig())
	r := res(s.AttrHWID, "GPU-label", s.AttrHWModel, "NVIDIA A100-SXM4-80GB",
		"k8s.node.label.node.kubernetes.io/instance-type", "test.8gpu",
		"k8s.node.label.topology.kubernetes.io/region", "eu-west-1", s.MetricGREngineActive, 0.5)
	if got := costOf(h.send(at(0), r), "GPU-label", ""); !got.found || got.price != 2 {
		t.Fatalf("node labels: %+v", got)
	}
}

func TestUnpricedResourcesPassThroughWithOneWarning(t *testing.T) {
	h := newHarness(t, testConfig())
	r := gpu("GPU-x", s.AttrHostType, "x9.mystery", s.MetricGREngineActive, 0.5)
	for i := 0; i < 5; i++ {
		out := h.send(at(time.Duration(i)*time.Minute), r)
		if got := costOf(out, "GPU-x", ""); got.found {
			t.Fatal("an unpriced resource must not get cost metrics")
		}
		if n := out.ResourceMetrics().At(0).ScopeMetrics().Len(); n != 1 {
			t.Fatalf("the resource's own metrics must pass unchanged, got %d scopes", n)
		}
	}
	warnings := h.logged.FilterMessageSnippet("no price row for this instance type").All()
	if len(warnings) != 1 {
		t.Fatalf("want one rate-limited warning, got %d", len(warnings))
	}
	if got := warnings[0].ContextMap()[s.AttrHostType]; got != "x9.mystery" {
		t.Errorf("the warning names the instance type: %v", got)
	}
	if !strings.Contains(warnings[0].Message, "pricing.files") {
		t.Errorf("the warning says how to add a row: %q", warnings[0].Message)
	}
	// Without an instance type and without a model row: a different hint.
	h.send(at(10*time.Minute), res(s.AttrHWID, "GPU-bare", s.AttrHWModel, "NVIDIA H100", s.MetricGREngineActive, 0.5))
	if n := h.logged.FilterMessageSnippet(`instance_type "*"`).Len(); n != 1 {
		t.Fatalf("want a hint about model rows, got %d", n)
	}
}

func TestMIGRemainderCarriesUnallocatedAndFragmentation(t *testing.T) {
	h := newHarness(t, testConfig())
	inst := migInstance("GPU-M", "1", "4g.40gb", 4.0/7, held("a", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...)
	h.send(at(0), inst)
	out := h.send(at(step), inst)

	// One 4g.40gb (share 4/7) on an 80 GB GPU: 3/7 of the GPU is not
	// partitioned. It has 3 free compute and 4 free memory slices, so one
	// memory slice (1/8) can host nothing: fragmentation 0.125 × 0.01, the
	// rest of the 3/7 unallocated.
	rem := costOf(out, "GPU-M", remainderID)
	if !rem.found {
		t.Fatal("no remainder resource for the MIG-enabled GPU")
	}
	if !near(rem.price, 3.0/7) || !near(rem.cost, 0.01*3/7) {
		t.Errorf("remainder price %v cost %v", rem.price, rem.cost)
	}
	wantWaste(t, rem, map[string]float64{
		s.WasteFragmentation: 0.01 * 0.125,
		s.WasteUnallocated:   0.01 * (3.0/7 - 0.125),
	})
	if st := stringAttr(rem.attrs, s.AttrAllocationState); st != s.AllocationUnallocated {
		t.Errorf("remainder allocation state %q", st)
	}
	if node := stringAttr(rem.attrs, s.AttrK8sNodeName); node != "node-a" {
		t.Errorf("remainder keeps the node: %q", node)
	}
	if _, ok := rem.attrs.Get(s.AttrWorkloadName); ok {
		t.Error("the remainder belongs to no workload")
	}
	inst1 := costOf(out, "GPU-M/gi1", "")
	if !near(inst1.cost+rem.cost, 0.01) {
		t.Errorf("the GPU's costs add up to its price: %v + %v", inst1.cost, rem.cost)
	}
	// Fed back in (a second accelerator_cost downstream), nothing changes.
	before := out.DataPointCount()
	again := pmetric.NewMetrics()
	out.CopyTo(again)
	if err := h.metrics.ConsumeMetrics(t.Context(), again); err != nil {
		t.Fatal(err)
	}
	if got := h.msink.AllMetrics()[len(h.msink.AllMetrics())-1].DataPointCount(); got != before {
		t.Errorf("already costed resources must pass unchanged: %d points, had %d", got, before)
	}
}

func TestMIGParentWithItsOwnResourceCarriesTheRemainder(t *testing.T) {
	h := newHarness(t, testConfig())
	parent := gpu("GPU-Q", s.AttrAllocationState, s.AllocationAllocated, s.MetricPower, 200.0)
	inst := migInstance("GPU-Q", "1", "4g.40gb", 4.0/7, held("a", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...)
	h.send(at(0), parent, inst)
	out := h.send(at(step), parent, inst)
	if rem := costOf(out, "GPU-Q", remainderID); rem.found {
		t.Fatal("a GPU reported as a resource of its own gets no synthetic remainder")
	}
	own := costOf(out, "GPU-Q", "")
	if !near(own.price, 3.0/7) {
		t.Errorf("the parent resource stands for the remainder: price %v", own.price)
	}
	wantWaste(t, own, map[string]float64{
		s.WasteFragmentation: 0.01 * 0.125,
		s.WasteUnallocated:   0.01 * (3.0/7 - 0.125),
	})
}

func TestNeuronCoresCarryTheDeviceCost(t *testing.T) {
	h := newHarness(t, testConfig())
	device := res(s.AttrHWID, "neuron_device_0", s.AttrHWModel, "inferentia2", s.AttrKind, s.KindAWSNeuron,
		s.AttrPartitionType, s.PartitionNone, s.AttrPartitionShare, 1.0, s.AttrHostType, "test.neuron",
		s.MetricGPUMemoryUsage, []float64{1 << 30, 2 << 30})
	core := func(i string) resource {
		return res(s.AttrHWID, "neuron_device_0/neuroncore_"+i, s.AttrHWParent, "neuron_device_0",
			s.AttrHWModel, "inferentia2", s.AttrKind, s.KindAWSNeuron, s.AttrPartitionType, s.PartitionNeuronCore,
			s.AttrPartitionID, i, s.AttrHostType, "test.neuron", s.MetricGPUUtilization, 0.5,
			s.AttrK8sPodName, "inf-0", s.AttrK8sNamespaceName, "ml")
	}
	h.send(at(0), device, core("0"), core("1"))
	out := h.send(at(step), device, core("0"), core("1"))
	// test.neuron: 4 USD/h for 2 devices of 2 cores: 2 USD per device-hour,
	// 1 USD per core-hour; the device resource stands for nothing its cores
	// do not.
	for _, c := range []string{"0", "1"} {
		got := costOf(out, "neuron_device_0/neuroncore_"+c, "")
		if !near(got.price, 1) || !near(got.cost, 0.01) {
			t.Errorf("core %s: price %v cost %v", c, got.price, got.cost)
		}
	}
	dev := costOf(out, "neuron_device_0", "")
	if !dev.found || dev.price != 0 || dev.cost != 0 {
		t.Errorf("device resource: %+v", dev)
	}
}

func TestOutputUsesRegisteredNamesAndUnits(t *testing.T) {
	h := newHarness(t, testConfig())
	out := h.send(at(0), gpu("GPU-1", s.MetricGREngineActive, 0.5))
	sm := out.ResourceMetrics().At(0).ScopeMetrics().At(1)
	if sm.Scope().Name() != metadata.ScopeName || sm.Scope().Version() != "test" {
		t.Fatalf("scope %q %q", sm.Scope().Name(), sm.Scope().Version())
	}
	for i := 0; i < sm.Metrics().Len(); i++ {
		m := sm.Metrics().At(i)
		def, ok := s.LookupMetric(m.Name())
		if !ok {
			t.Errorf("%s is not registered", m.Name())
			continue
		}
		if m.Unit() != def.Unit {
			t.Errorf("%s: unit %q, registry says %q", m.Name(), m.Unit(), def.Unit)
		}
		switch def.Instrument {
		case s.Gauge:
			if m.Type() != pmetric.MetricTypeGauge {
				t.Errorf("%s should be a gauge", m.Name())
			}
		case s.Counter:
			if m.Type() != pmetric.MetricTypeSum || !m.Sum().IsMonotonic() ||
				m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
				t.Errorf("%s should be a cumulative monotonic sum", m.Name())
			}
		}
		if m.Type() == pmetric.MetricTypeSum {
			for d := 0; d < m.Sum().DataPoints().Len(); d++ {
				dp := m.Sum().DataPoints().At(d)
				dp.Attributes().Range(func(k string, _ pcommon.Value) bool {
					if !containsString(def.Attributes, k) {
						t.Errorf("%s carries %s, which the registry does not list", m.Name(), k)
					}
					return true
				})
			}
		}
	}
}

func containsString(list []string, x string) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}
