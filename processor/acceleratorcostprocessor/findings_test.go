package acceleratorcostprocessor

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/findingtext"
)

const minute = time.Minute

type wantFinding struct {
	kind, target, healthAction string
	saving                     float64 // USD per month, as the record rounds it
	evidence                   []string
	actionHas                  string
	atBatch                    int // the batch that raises it
}

func checkFinding(t *testing.T, lr plog.LogRecord, want wantFinding) {
	t.Helper()
	attrs := lr.Attributes()
	get := func(k string) string {
		if v, ok := attrs.Get(k); ok {
			return v.AsString()
		}
		return ""
	}
	if get(s.AttrFindingKind) != want.kind {
		t.Errorf("kind %q, want %q", get(s.AttrFindingKind), want.kind)
	}
	if get(s.AttrFindingTarget) != want.target {
		t.Errorf("target %q, want %q", get(s.AttrFindingTarget), want.target)
	}
	saving, _ := attrs.Get(s.AttrFindingSavingMonth)
	if math.Abs(saving.Double()-want.saving) > 0.005 {
		t.Errorf("monthly saving %v, want %v", saving.Double(), want.saving)
	}
	for _, e := range want.evidence {
		if !strings.Contains(get(s.AttrFindingEvidence), e) {
			t.Errorf("evidence %q lacks %q", get(s.AttrFindingEvidence), e)
		}
	}
	if !strings.Contains(get(s.AttrFindingAction), want.actionHas) {
		t.Errorf("action %q lacks %q", get(s.AttrFindingAction), want.actionHas)
	}
	if want.healthAction != "" && get(s.AttrHealthAction) != want.healthAction {
		t.Errorf("health action %q, want %q", get(s.AttrHealthAction), want.healthAction)
	}
	if lr.EventName() != s.EventFinding || get(s.AttrEventName) != s.EventFinding {
		t.Errorf("event name %q / %q", lr.EventName(), get(s.AttrEventName))
	}
	if lr.SeverityNumber() != plog.SeverityNumberWarn || !strings.Contains(lr.Body().Str(), want.kind) {
		t.Errorf("severity %v body %q", lr.SeverityNumber(), lr.Body().Str())
	}
	for field, text := range map[string]string{"body": lr.Body().Str(), "action": get(s.AttrFindingAction), "evidence": get(s.AttrFindingEvidence)} {
		if empty := findingtext.EmptyFields(text); len(empty) > 0 {
			t.Errorf("%s %q has empty fields: %v", field, text, empty)
		}
	}
}

func TestFindings(t *testing.T) {
	gib := float64(1 << 30)
	tests := []struct {
		name      string
		cfg       func(*Config)
		resources func(i int) []resource
		batches   int
		hwID      string
		want      wantFinding
	}{
		{
			name: "rightsizing: a whole A100 80GB peaking at 10 % and 6 GiB fits a 1g.10gb",
			resources: func(i int) []resource {
				return []resource{gpu("GPU-rs", held("small", s.WorkloadBatch, s.MetricGREngineActive, 0.1,
					s.MetricGPUMemoryUsage, 6*gib, s.MetricGPUMemoryLimit, 80*gib)...)}
			},
			// Need 0.1 × 7 × 1.2 = 0.84 compute slices and 6/80 × 1.2 = 0.09
			// of the memory: 1g.10gb (share 1/7). Saving (1 − 1/7) × 1 USD/h
			// × 730 h. The window (4 min, half covered) is ready at batch 2.
			batches: 6, hwID: "GPU-rs",
			want: wantFinding{kind: s.FindingRightsizing, target: "1g.10gb", saving: 6.0 / 7 * 730, atBatch: 2,
				evidence:  []string{"peak_activity=0.100", "peak_memory_ratio=0.075", "current=test.8gpu", "window=4m0s"},
				actionHas: "move ml/small to a 1g.10gb MIG instance"},
		},
		{
			name: "rightsizing: a 3g.40gb instance at 20 % and 5 GiB fits a 1g.10gb",
			resources: func(i int) []resource {
				return []resource{migInstance("GPU-R", "1", "3g.40gb", 0.5, held("mid", s.WorkloadBatch, s.MetricGREngineActive, 0.2,
					s.MetricGPUMemoryUsage, 5*gib, s.MetricGPUMemoryLimit, 40*gib)...)}
			},
			// Need 0.2 × 3 × 1.2 = 0.72 slices and 5/40 × 4/8 × 1.2 = 0.075 of
			// the GPU's memory: 1g.10gb. Saving (0.5 − 1/7) × 730.
			batches: 3, hwID: "GPU-R/gi1",
			want: wantFinding{kind: s.FindingRightsizing, target: "1g.10gb", saving: (0.5 - 1.0/7) * 730, atBatch: 2,
				evidence: []string{"current=3g.40gb", "share=0.500"}, actionHas: "1g.10gb MIG instance"},
		},
		{
			name: "rightsizing: the same L4 on a cheaper instance type",
			resources: func(i int) []resource {
				return []resource{gpu("GPU-L4", append(held("vision", s.WorkloadBatch, s.MetricGREngineActive, 0.5,
					s.MetricGPUMemoryUsage, 10*gib, s.MetricGPUMemoryLimit, 24*gib), s.AttrHostType, "test.l4x2", s.AttrHWModel, "NVIDIA L4")...)}
			},
			// test.l4x2 is 1 USD per L4-hour, test.l4x1 0.8 (the bundled
			// g6.xlarge is 0.8048); 10 GiB × 1.2 fits 24 GB. Saving 0.2 × 730.
			batches: 3, hwID: "GPU-L4",
			want: wantFinding{kind: s.FindingRightsizing, target: "test.l4x1", saving: 0.2 * 730, atBatch: 2,
				evidence: []string{"peak_memory_gib=10.00", "current=test.l4x2"}, actionHas: "run ml/vision on test.l4x1"},
		},
		{
			name: "training efficiency: the window averages 0.45 against a baseline of 12.3/21",
			cfg: func(c *Config) {
				c.Baselines.MinSamples = 10
				c.Baselines.HalfLife = 100000 * time.Hour // no decay within the test
			},
			resources: func(i int) []resource {
				tensor := 0.6
				if i >= 21 {
					tensor = 0.3
				}
				return []resource{gpu("GPU-T", held("pretrain", s.WorkloadTraining, s.MetricGREngineActive, 0.9, s.MetricTensorActive, tensor)...)}
			},
			// Batches 1-20 at 0.6 make the baseline 0.6; batch 21 (0.3) makes
			// it (20 × 0.6 + 0.3)/21 = 12.3/21. At batch 22 the 4-minute
			// window holds 0.6, 0.6, 0.3, 0.3 (mean 0.45 < 0.8 × 12.3/21), so
			// the finding: (1 − 0.45 × 21/12.3) × 1 USD/h × 730 h.
			batches: 25, hwID: "GPU-T",
			want: wantFinding{kind: s.FindingTrainingEfficiency, target: "accelerator.tensor.active>=0.586",
				saving: (1 - 0.45*21/12.3) * 730, atBatch: 22,
				evidence: []string{"window_mean=0.450", "baseline=0.586", "signal=accelerator.tensor.active"}, actionHas: "find what starves ml/pretrain"},
		},
		{
			name: "training efficiency on a device that names no model",
			cfg: func(c *Config) {
				c.Baselines.MinSamples = 10
				c.Baselines.HalfLife = 100000 * time.Hour
			},
			resources: func(i int) []resource {
				tensor := 0.6
				if i >= 21 {
					tensor = 0.3
				}
				return []resource{gpu("GPU-T2", append(held("bare", s.WorkloadTraining, s.MetricGREngineActive, 0.9, s.MetricTensorActive, tensor),
					s.AttrHWModel, "")...)}
			},
			// As above; the sentence leaves the model out instead of
			// writing "on :".
			batches: 25, hwID: "GPU-T2",
			want: wantFinding{kind: s.FindingTrainingEfficiency, target: "accelerator.tensor.active>=0.586",
				saving: (1 - 0.45*21/12.3) * 730, atBatch: 22,
				evidence: []string{"window_mean=0.450"}, actionHas: "find what starves ml/bare: its accelerator.tensor.active"},
		},
		{
			name: "inference under capacity: two replicas at peak 0.1 activity and 0.2 KV cache need one",
			resources: func(i int) []resource {
				var rs []resource
				for _, r := range []string{"0", "1"} {
					rs = append(rs,
						gpu("GPU-I"+r, append(held("chat", s.WorkloadInference, s.MetricGREngineActive, 0.1), s.AttrK8sPodName, "chat-"+r, s.AttrK8sPodUID, "uid-chat-"+r)...),
						res(s.AttrK8sPodUID, "uid-chat-"+r, s.MetricKVCacheUtilization, 0.2, s.MetricRequestsWaiting, 0.0))
				}
				return rs
			},
			// load = 0.2: replicas ceil(2 × 0.2/0.6) = 1; saving per replica
			// (1 − 0.2/0.6) × 1 USD/h × 730 h.
			batches: 3, hwID: "GPU-I0",
			want: wantFinding{kind: s.FindingInferenceUnderCapacity, target: "replicas=1", saving: 2.0 / 3 * 730, atBatch: 2,
				evidence: []string{"peak_kv_cache=0.200", "max_waiting=0", "replicas=2"}, actionHas: "scale ml/chat from 2 to 1 replicas"},
		},
		{
			name: "unhealthy capacity: hw.status failed, no event to say why",
			resources: func(i int) []resource {
				return []resource{gpu("GPU-U", held("job", s.WorkloadBatch, s.MetricStatus, s.HWStateFailed)...)}
			},
			// The first failed interval waits for a health event with an
			// action (it travels in the logs pipeline); none comes, so the
			// second raises "contact support".
			batches: 3, hwID: "GPU-U",
			want: wantFinding{kind: s.FindingUnhealthyCapacity, target: s.ActionContactSupport, healthAction: s.ActionContactSupport,
				saving: 730, atBatch: 1, evidence: []string{"hw.state=failed", "price_per_hour=1.0000"}, actionHas: "contact_support"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			if tt.cfg != nil {
				tt.cfg(cfg)
			}
			h := newHarness(t, cfg)
			raisedAt := -1
			for i := 0; i < tt.batches; i++ {
				h.send(at(time.Duration(i)*minute), tt.resources(i)...)
				if raisedAt < 0 && len(h.findingsFor(tt.hwID)) > 0 {
					raisedAt = i
				}
			}
			fs := h.findingsFor(tt.hwID)
			if len(fs) != 1 {
				t.Fatalf("want exactly one finding (cooldown), got %d", len(fs))
			}
			if raisedAt != tt.want.atBatch {
				t.Errorf("raised at batch %d, want %d", raisedAt, tt.want.atBatch)
			}
			checkFinding(t, fs[0], tt.want)
			last := costOf(h.msink.AllMetrics()[len(h.msink.AllMetrics())-1], tt.hwID, "")
			if last.findings[tt.want.kind] != 1 {
				t.Errorf("accelerator.findings{%s} = %d, want 1", tt.want.kind, last.findings[tt.want.kind])
			}
		})
	}
}

// findingsFor returns the findings about one hw.id.
func (h *harness) findingsFor(hwID string) []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range h.lsink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			if stringAttr(rl.Resource().Attributes(), s.AttrHWID) != hwID {
				continue
			}
			lrs := rl.ScopeLogs().At(0).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				if lrs.At(k).EventName() == s.EventFinding {
					out = append(out, lrs.At(k))
				}
			}
		}
	}
	return out
}

func TestNoFindingWhenNothingIsWrong(t *testing.T) {
	h := newHarness(t, testConfig())
	gib := float64(1 << 30)
	for i := 0; i < 10; i++ {
		h.send(at(time.Duration(i)*minute),
			gpu("GPU-ok", held("busy", s.WorkloadTraining, s.MetricGREngineActive, 0.9, s.MetricTensorActive, 0.7,
				s.MetricGPUMemoryUsage, 70*gib, s.MetricGPUMemoryLimit, 80*gib)...),
			gpu("GPU-serve", held("hot", s.WorkloadInference, s.MetricGREngineActive, 0.8)...),
			res(s.AttrK8sPodUID, "uid-hot", s.MetricKVCacheUtilization, 0.9, s.MetricRequestsWaiting, 12.0))
	}
	if n := len(h.findings()); n != 0 {
		t.Fatalf("%d findings about healthy, busy devices", n)
	}
}

func TestHealthEventRaisesUnhealthyCapacityOnTheLogsSide(t *testing.T) {
	h := newHarness(t, testConfig())
	inst := func(gi string) resource {
		return migInstance("GPU-H", gi, "3g.40gb", 0.5, held("w"+gi, s.WorkloadBatch, s.MetricGREngineActive, 0.5)...)
	}
	h.send(at(0), inst("1"), inst("2"))

	// XID 48 on the parent GPU, as the dcgm receiver reports it.
	out := h.sendLogs(healthEvent("GPU-H", at(30*time.Second), 48, s.HWStateFailed, s.ActionDrainAndReset))
	if out.ResourceLogs().Len() != 3 {
		t.Fatalf("want the event and one finding per MIG instance, got %d resources", out.ResourceLogs().Len())
	}
	fs := h.findings()
	if len(fs) != 2 {
		t.Fatalf("want 2 findings, got %d", len(fs))
	}
	for _, f := range fs {
		checkFinding(t, f, wantFinding{kind: s.FindingUnhealthyCapacity, target: s.ActionDrainAndReset, healthAction: s.ActionDrainAndReset,
			saving: 0.5 * 730, evidence: []string{"hw.state=failed"}, actionHas: "drain_and_reset: drain the node's workloads"})
	}
	rl := out.ResourceLogs().At(1)
	if stringAttr(rl.Resource().Attributes(), s.AttrWorkloadName) == "" || stringAttr(rl.Resource().Attributes(), s.AttrK8sNodeName) != "node-a" {
		t.Error("a finding carries the device's resource: workload and node")
	}

	// The next interval is unavailable waste, and the finding is not repeated.
	m := h.send(at(step), inst("1"), inst("2"))
	got := costOf(m, "GPU-H/gi1", "")
	wantWaste(t, got, map[string]float64{s.WasteUnavailable: 0.005})
	if got.findings[s.FindingUnhealthyCapacity] != 1 || len(h.findings()) != 2 {
		t.Errorf("finding counted %d times, %d records", got.findings[s.FindingUnhealthyCapacity], len(h.findings()))
	}
	// After health.hold (15 min) without another event, the device is
	// available again.
	h.send(at(16*time.Minute), inst("1"), inst("2"))
	after := costOf(h.send(at(16*time.Minute+step), inst("1"), inst("2")), "GPU-H/gi1", "")
	if !near(after.waste[s.WasteUnavailable], got.waste[s.WasteUnavailable]) {
		t.Errorf("unavailable after the hold: %v, was %v", after.waste[s.WasteUnavailable], got.waste[s.WasteUnavailable])
	}
}

func TestHealthEventActionFromTheXIDCatalogue(t *testing.T) {
	h := newHarness(t, testConfig())
	h.send(at(0), gpu("GPU-79", held("job", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...))
	h.sendLogs(healthEvent("GPU-79", at(time.Second), 79, s.HWStateFailed, ""))
	fs := h.findings()
	if len(fs) != 1 {
		t.Fatalf("%d findings", len(fs))
	}
	checkFinding(t, fs[0], wantFinding{kind: s.FindingUnhealthyCapacity, target: s.ActionRebootNode, healthAction: s.ActionRebootNode,
		saving: 730, actionHas: "no longer reachable over PCIe"})
	// An application XID (hw.state ok) marks nothing.
	h.sendLogs(healthEvent("GPU-79", at(time.Second), 31, s.HWStateOK, s.ActionRestartApp))
	if len(h.findings()) != 1 {
		t.Error("an application fault is not unhealthy capacity")
	}
}

func TestFindingsWithoutALogsPipelineAreCountedAndDebugLogged(t *testing.T) {
	h := newHarness(t, testConfig(), withoutLogsPipeline())
	var last costOut
	for i := 0; i < 2; i++ {
		last = costOf(h.send(at(time.Duration(i)*minute), gpu("GPU-U", s.MetricStatus, s.HWStateFailed)), "GPU-U", "")
	}
	if last.findings[s.FindingUnhealthyCapacity] != 1 {
		t.Fatalf("findings counted: %v", last.findings)
	}
	if n := h.logged.FilterMessageSnippet("finding").Len(); n != 1 {
		t.Fatalf("want the finding debug-logged once, got %d", n)
	}
}

func TestIntervalsBeforeAHealthEventAreNotUnavailable(t *testing.T) {
	h := newHarness(t, testConfig())
	r := gpu("GPU-late", held("job", s.WorkloadBatch, s.MetricGREngineActive, 0.5)...)
	h.send(at(0), r)
	h.sendLogs(healthEvent("GPU-late", at(time.Minute), 79, s.HWStateFailed, ""))
	// A batch for 0–36 s arrives after the event at 60 s: not unavailable.
	before := costOf(h.send(at(step), r), "GPU-late", "")
	wantWaste(t, before, nil)
	after := costOf(h.send(at(2*step), r), "GPU-late", "")
	wantWaste(t, after, map[string]float64{s.WasteUnavailable: 0.01})
}

// On a shared GPU the consumers' copies pay for it: a failure is raised
// for each of them, naming its pod, and advice goes to the consumer whose
// own usage earns it. The GPU's own resource, fully held, pays nothing and
// raises nothing, though it carries the hw.status that says it failed.
func TestFindingsOnASharedDeviceNameItsConsumers(t *testing.T) {
	cfg := testConfig()
	cfg.Findings.MinMonthlySaving = 0 // so that a finding worth nothing would show
	h := newHarness(t, cfg)
	status := s.HWStateOK
	batchOf := func() []resource {
		return []resource{
			sharedGPU("GPU-SH", 0, s.AllocationAllocated, s.MetricStatus, status, s.MetricGREngineActive, 0.5),
			sliced("GPU-SH", "GPU-SH::0", 0.5, held("chat", s.WorkloadInference, s.MetricGPUUtilization, 0.1)...),
			sliced("GPU-SH", "GPU-SH::1", 0.5, held("etl", s.WorkloadBatch, s.MetricGPUUtilization, 0.4)...),
			res(s.AttrK8sPodUID, "uid-chat", s.MetricKVCacheUtilization, 0.1, s.MetricRequestsWaiting, 0.0),
		}
	}
	for i := 0; i < 6; i++ {
		h.send(at(time.Duration(i)*minute), batchOf()...)
	}
	fs := h.findings()
	if len(fs) != 1 {
		t.Fatalf("want one inference finding, got %d", len(fs))
	}
	checkFinding(t, fs[0], wantFinding{kind: s.FindingInferenceUnderCapacity, saving: (1 - 0.1/0.6) * 0.5 * 730,
		evidence: []string{"peak_activity=0.100", "peak_kv_cache=0.100"}, actionHas: "ml/chat"})

	status = s.HWStateFailed
	h.send(at(6*minute), batchOf()...)
	h.sendLogs(healthEvent("GPU-SH", at(6*minute+time.Second), 79, s.HWStateFailed, s.ActionRebootNode))
	var pods []string
	for _, ld := range h.lsink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			lr := rl.ScopeLogs().At(0).LogRecords().At(0)
			if k, _ := lr.Attributes().Get(s.AttrFindingKind); k.Str() != s.FindingUnhealthyCapacity {
				continue
			}
			checkFinding(t, lr, wantFinding{kind: s.FindingUnhealthyCapacity, target: s.ActionRebootNode, healthAction: s.ActionRebootNode,
				saving: 0.5 * 730, evidence: []string{"hw.state=failed"}, actionHas: "reboot_node"})
			pods = append(pods, stringAttr(rl.Resource().Attributes(), s.AttrK8sPodName))
		}
	}
	slices.Sort(pods)
	if !slices.Equal(pods, []string{"chat-0", "etl-0"}) {
		t.Errorf("want one unhealthy-capacity finding per consumer, none for the GPU's own resource; got them for pods %q", pods)
	}
}

// workloadName names whoever a finding is for with what the identity has,
// never with an empty part.
func TestWorkloadNameLeavesNoPartEmpty(t *testing.T) {
	for _, c := range []struct {
		id   identity
		want string
	}{
		{identity{workload: "vllm", namespace: "chat"}, "chat/vllm"},
		{identity{workload: "vllm"}, "vllm"},
		{identity{podName: "nb-0", namespace: "ds"}, "pod ds/nb-0"},
		{identity{podName: "nb-0"}, "pod nb-0"},
		{identity{hwID: "GPU-1"}, "the workload on GPU-1"},
		{identity{}, "the workload on this accelerator"},
	} {
		got := workloadName(&c.id)
		if got != c.want {
			t.Errorf("%+v: %q, want %q", c.id, got, c.want)
		}
		if empty := findingtext.EmptyFields("move " + got + " to a 1g.10gb MIG instance"); len(empty) > 0 {
			t.Errorf("%q: %v", got, empty)
		}
	}
}
