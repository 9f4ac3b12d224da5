package neuronmonitor

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

// The configuration example of the neuron-monitor user guide.
const guideConfig = `{
  "period": "1s",
  "neuron_runtimes": [
    {
      "tag_filter": ".*",
      "metrics": [
        {"type": "neuroncore_counters"},
        {"type": "memory_used"},
        {"type": "neuron_runtime_vcpu_usage"},
        {"type": "execution_stats"}
      ]
    }
  ],
  "system_metrics": [
    {"type": "vcpu_usage"},
    {"type": "memory_info"},
    {"period": "2s", "type": "neuron_hw_counters"}
  ]
}`

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(guideConfig))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.plan()
	if len(p.runtimes) != 1 || len(p.runtimes[0].groups) != 4 || p.runtimes[0].groups[0].period != time.Second {
		t.Errorf("runtime plan: %+v", p.runtimes)
	}
	if p.system[2].typ != GroupHWCounters || p.system[2].period != 2*time.Second || p.system[0].period != time.Second {
		t.Errorf("system plan: %+v", p.system)
	}
	bad := []struct{ in, want string }{
		{`{"period": "1s",`, "invalid JSON: the document ends early"},
		{`{"period": "1s"]`, "invalid JSON at byte 16"},
		{``, "empty configuration"},
		{`{"period": "soon"}`, `period: invalid period "soon"`},
		{`{"neuron_runtimes": [{"metrics": [{"type": "gpu_counters"}]}]}`, `neuron_runtimes[0].metrics[0].type: unknown runtime metric group "gpu_counters"`},
		{`{"system_metrics": [{"type": "neuroncore_counters"}]}`, `system_metrics[0].type: unknown system metric group`},
		{`{"neuron_runtimes": [{"tag_filter": "(", "metrics": []}]}`, "neuron_runtimes[0].tag_filter: invalid regular expression"},
		{`{"neuron_runtimes": [{"period": "-1s", "metrics": []}]}`, `neuron_runtimes[0].period: invalid period "-1s"`},
		{`{"period": 5}`, `field "period": want string, got JSON number`},
		{`{"peroid": "1s"}`, `unknown field "peroid"`},
		{`{} {}`, "trailing data"},
	}
	for _, b := range bad {
		_, err := ParseConfig([]byte(b.in))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: got %v, want %q", b.in, err, b.want)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(guideConfig))
	f.Add([]byte(`{"neuron_runtimes":[{"tag_filter":"^llama","period":"500ms","metrics":[{"type":"execution_stats","period":"2s"}]}]}`))
	f.Add([]byte(`{"period":"1h"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		if _, err := c.plan(); err != nil {
			t.Fatalf("accepted a config whose plan fails: %v", err)
		}
	})
}

// monitor runs a node's monitor on a fixed clock that the test advances.
type monitor struct {
	*Monitor
	clock *sim.FixedClock
	node  *fleet.Node
}

func newMonitor(t *testing.T, f *fleet.Fleet, node, config string, speed float64) *monitor {
	t.Helper()
	cfg := DefaultConfig()
	if config != "" {
		var err error
		if cfg, err = ParseConfig([]byte(config)); err != nil {
			t.Fatal(err)
		}
	}
	n, _ := f.Node(node)
	clock := &sim.FixedClock{T: time.Unix(1_800_000_000, 0)}
	m, err := New(cfg, sim.NewWorld(f), n, sim.Timeline{Start: clock.T, Speed: speed, Clock: clock}, clock.T)
	if err != nil {
		t.Fatal(err)
	}
	return &monitor{Monitor: m, clock: clock, node: n}
}

// next advances the clock to the next due group and returns the report.
func (m *monitor) next(t *testing.T) map[string]any {
	t.Helper()
	due, _ := m.NextDue()
	m.clock.T = due
	b, err := m.Collect(due)
	if err != nil || b == nil {
		t.Fatalf("collect: %v %v", b, err)
	}
	if !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("\n")) != 1 {
		t.Fatal("a report is one line of JSON")
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func get(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func TestGuideSchemaOnTrn2(t *testing.T) {
	f := simtest.Trn2Fleet(t)
	m := newMonitor(t, f, "neuron-trn2-a", guideConfig, 60)
	r := m.next(t)
	for _, key := range []string{"neuron_runtime_data", "system_data", "instance_info", "neuron_hardware_info"} {
		if _, ok := r[key]; !ok {
			t.Errorf("report lacks %s", key)
		}
	}
	hw := get(r, "neuron_hardware_info").(map[string]any)
	if hw["neuron_device_type"] != "trainium2" || hw["neuroncore_version"] != "v3d" || hw["neuron_device_count"] != 16.0 ||
		hw["neuroncore_per_device_count"] != 4.0 || hw["logical_neuroncore_config"] != 2.0 || hw["neuron_device_memory_size"] != float64(96<<30) {
		t.Errorf("hardware info: %v", hw)
	}
	ii := get(r, "instance_info").(map[string]any)
	if ii["instance_type"] != "trn2.48xlarge" || ii["instance_availability_zone"] != "us-east-1a" || ii["instance_region"] != "us-east-1" || !strings.HasPrefix(ii["instance_id"].(string), "i-0") {
		t.Errorf("instance info: %v", ii)
	}
	rts := r["neuron_runtime_data"].([]any)
	if len(rts) != 2 {
		t.Fatalf("%d runtimes", len(rts))
	}
	rt := rts[0].(map[string]any)
	cores := get(rt, "report", "neuroncore_counters", "neuroncores_in_use").(map[string]any)
	if len(cores) != 64 {
		t.Errorf("a runtime lists every core: %d", len(cores))
	}
	busy := cores["0"].(map[string]any)
	if busy["neuroncore_utilization"].(float64) < 50 || busy["flops"] == nil || busy["effective_flops"] != nil {
		t.Errorf("core 0: %v", busy)
	}
	v3d := busy["v3d"].(map[string]any)
	if len(v3d) != 2 || v3d["nc_v3.0"] == nil || v3d["nc_v3.1"] == nil {
		t.Errorf("v3d of core 0: %v", v3d)
	}
	if idle := cores["40"].(map[string]any); idle["neuroncore_utilization"] != 0.0 {
		t.Errorf("a core the runtime does not use: %v", idle)
	}
	if e := get(rt, "report", "neuron_runtime_vcpu_usage", "error").(string); !strings.HasPrefix(e, "open /proc/") {
		t.Errorf("vCPU error of a containerised monitor: %q", e)
	}
	used := get(rt, "report", "memory_used", "neuron_runtime_used_bytes").(map[string]any)
	if used["neuron_device"].(float64) <= 0 || used["device"] != nil {
		t.Errorf("runtime memory: %v", used)
	}
	// Groups keep their own periods: hw counters every 2 s, the rest every 1 s.
	if get(r, "system_data", "neuron_hw_counters") != nil {
		t.Error("neuron_hw_counters reported before its 2 s period")
	}
	r = m.next(t)
	hc := get(r, "system_data", "neuron_hw_counters")
	if hc == nil || len(get(hc, "neuron_devices").([]any)) != 16 || get(hc, "period").(float64) != 2 {
		t.Errorf("neuron_hw_counters after 2 s: %v", hc)
	}
}

func TestInf2CaptureSchema(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	m := newMonitor(t, f, "neuron-inf2-a", guideConfig, 60)
	r := m.next(t)
	rt := r["neuron_runtime_data"].([]any)[0].(map[string]any)
	if rt["neuron_runtime_tag"] != "llama-inf2" {
		t.Errorf("tag %v", rt["neuron_runtime_tag"])
	}
	core := get(rt, "report", "neuroncore_counters", "neuroncores_in_use", "0").(map[string]any)
	if core["effective_flops"] == nil || core["flops"] != nil || core["v3d"] != nil {
		t.Errorf("inf2 core: %v", core)
	}
	used := get(rt, "report", "memory_used", "neuron_runtime_used_bytes").(map[string]any)
	if used["device"] == nil || used["neuron_device"] != nil {
		t.Errorf("inf2 runtime memory: %v", used)
	}
	if hw := get(r, "neuron_hardware_info", "neuron_device_type"); hw != "inferentia2" {
		t.Errorf("device type %v", hw)
	}
}

func TestLegacySchemaAndNullRuntimeData(t *testing.T) {
	f := simtest.Fleet(t, `nodes:
  - name: trn1
    instance_type: trn1.32xlarge
    neuron: {schema: legacy}
`, 1)
	m := newMonitor(t, f, "trn1", "", 1)
	r := m.next(t)
	if v, ok := r["neuron_runtime_data"]; !ok || v != nil {
		t.Errorf("neuron_runtime_data with no runtime: %v (present %v), want null", v, ok)
	}
	hw := r["neuron_hardware_info"].(map[string]any)
	if len(hw) != 3 || hw["neuron_device_count"] != 16.0 || hw["neuroncore_per_device_count"] != 2.0 {
		t.Errorf("legacy hardware info: %v", hw)
	}
	g := simtest.Fleet(t, `nodes:
  - name: inf
    instance_type: inf2.xlarge
`, 1)
	if v := newMonitor(t, g, "inf", "", 1).next(t)["neuron_runtime_data"]; v == nil {
		t.Error("the guide schema reports an empty list, not null")
	}
}

// Counts are per period (deltas); an uncorrectable ECC event shows once, in
// the period that contains it, and the runtime on that device reports
// hardware errors and stops.
func TestDeltasAndFailures(t *testing.T) {
	f := simtest.Fleet(t, `nodes:
  - name: inf
    instance_type: inf2.24xlarge
    failures: [{device: 1, at: 2m, ecc: mem_uncorrected, count: 2}]
pods:
  - name: llm
    node: inf
    workload: {profile: inference-steady}
    containers: [{name: c, neuron_cores: [2, 3]}]
`, 1)
	m := newMonitor(t, f, "inf", `{"period":"5s","neuron_runtimes":[{"metrics":[{"type":"execution_stats"}]}],"system_metrics":[{"type":"neuron_hw_counters"}]}`, 12)
	var completed []float64
	var unc []float64
	hardware := 0.0
	for i := 0; i < 4; i++ { // 4 periods of 5 s at 12x: 0-1, 1-2, 2-3, 3-4 simulated minutes
		r := m.next(t)
		es := get(r["neuron_runtime_data"].([]any)[0], "report", "execution_stats").(map[string]any)
		completed = append(completed, get(es, "execution_summary", "completed").(float64))
		hardware += get(es, "error_summary", "hardware").(float64)
		dev := get(r, "system_data", "neuron_hw_counters", "neuron_devices").([]any)[1].(map[string]any)
		unc = append(unc, dev["mem_ecc_uncorrected"].(float64))
		if i == 3 && get(es, "latency_stats", "total_latency") != nil {
			t.Error("latency stats of a period without executions must be null")
		}
	}
	if completed[0] < 20 || completed[1] < 20 || completed[2] != 0 || completed[3] != 0 {
		t.Errorf("completed per period: %v", completed)
	}
	if unc[0] != 0 || unc[1] != 2 || unc[2] != 0 || unc[3] != 0 || hardware != 2 {
		t.Errorf("uncorrected ECC per period %v, hardware errors %v", unc, hardware)
	}
}

func TestTagFilterAndK8sInfo(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	m := newMonitor(t, f, "neuron-inf2-a", `{"period":"1s","neuron_runtimes":[{"tag_filter":"^llama","metrics":[{"type":"neuroncore_counters"}]}],"system_metrics":[{"type":"neuron_k8s_info"}]}`, 1)
	r := m.next(t)
	rts := r["neuron_runtime_data"].([]any)
	if len(rts) != 1 || get(rts[0], "neuron_runtime_tag") != "llama-inf2" {
		t.Errorf("tag filter ^llama kept %d runtimes", len(rts))
	}
	if e := get(r, "neuron_k8s_info", "neuroncores_k8s_info", "12").(map[string]any); e["pod_name"] != "notebook-dave" {
		t.Errorf("k8s info of core 12: %v", e)
	}
	if e := get(r, "neuron_k8s_info", "neurondevices_k8s_info", "5").(map[string]any); e["pod_name"] != "rerank-batch-0" {
		t.Errorf("k8s info of device 5: %v", e)
	}
}

// syncBuffer lets the test read while Run writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Count(s.b.Bytes(), []byte("\n"))
}

func TestRunStreamsReportsUntilCancelled(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	n, _ := f.Node("neuron-inf2-a")
	cfg, _ := ParseConfig([]byte(`{"period":"50ms","neuron_runtimes":[{"metrics":[{"type":"neuroncore_counters"}]}]}`))
	m, err := New(cfg, sim.NewWorld(f), n, sim.Timeline{Start: time.Now(), Speed: 1, Clock: sim.WallClock{}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, sim.WallClock{}, &out) }()
	deadline := time.Now().Add(10 * time.Second)
	for out.lines() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil || out.lines() < 3 {
		t.Fatalf("run: %v, %d reports", err, out.lines())
	}
}

func TestNotANeuronNode(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	n, _ := f.Node("gpu-h100-a")
	if _, err := New(DefaultConfig(), sim.NewWorld(f), n, sim.Timeline{Speed: 1, Clock: sim.WallClock{}}, time.Now()); err == nil || !strings.Contains(err.Error(), "no Neuron devices") {
		t.Errorf("got %v", err)
	}
}

func BenchmarkReportTrn2(b *testing.B) {
	f := simtest.Trn2Fleet(b)
	n, _ := f.Node("neuron-trn2-a")
	cfg, _ := ParseConfig([]byte(guideConfig))
	clock := &sim.FixedClock{T: time.Unix(1_800_000_000, 0)}
	m, err := New(cfg, sim.NewWorld(f), n, sim.Timeline{Start: clock.T, Speed: 1, Clock: clock}, clock.T)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	size := 0
	for i := 0; i < b.N; i++ {
		clock.T = clock.T.Add(2 * time.Second)
		out, err := m.Collect(clock.T)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "bytes/report")
}
