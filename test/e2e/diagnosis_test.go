//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The demo's injected latency regressions (fleet.yaml, from 90m simulated)
// each reach the gateway's events as a latency_regression finding naming
// the right cause, with its evidence and action, from the real chain:
// accelsim's servers and dcgm-exporter → the node agents (inference, dcgm,
// accelerator_attributes) → OTLP → the gateway's accelerator_diagnosis
// (demo-gateway.yaml's time scale) → the EMF events file.
func TestDemoLatencyRegressionsNameTheirCause(t *testing.T) {
	fleet := e2etest.StartFleet(t, e2etest.FleetOptions{
		// 60× speed, as make run: baselines warm within a minute of wall
		// time, the regressions come 90 s after the simulator starts.
		Sim:   e2etest.SimOptions{Speed: 60},
		Nodes: []string{"gpu-h100-a", "gpu-a100-a", "gpu-l4-a", "gpu-h200-a"},
		// demo-gateway.yaml's console, on a port of its own.
		GatewayEnv: []string{"OTELCOL_ACCEL_INSIGHTS_ENDPOINT=" + e2etest.FreeEndpoint(t)},
	})
	want := map[string]string{
		"chat/llm-serving":  accelschema.CauseKVCachePressure,
		"search/vllm-llama": accelschema.CauseThrottling,
		"search/vllm-embed": accelschema.CauseUnhealthyDevice,
		// The time-sliced L4 GPU 2 it shares with a batch job that starts
		// at 90m, read per pod (fleet.yaml: the L4 node's virtual_gpus, the
		// agent's per_pod_usage).
		"support/vllm-faq": accelschema.CauseNoisyNeighbour,
	}
	evidence := map[string]string{
		accelschema.CauseKVCachePressure: "kv_cache_usage=",
		accelschema.CauseThrottling:      "throttle_thermal=",
		accelschema.CauseUnhealthyDevice: "xid_events=",
		// The other consumer's activity on the same device.
		accelschema.CauseNoisyNeighbour: "neighbour_activity=",
	}
	var got map[string][]map[string]any
	named := func(ep string) map[string]any {
		// The endpoint's first finding that names a cause: a window at the
		// regression's onset may show the rise before its signal (then the
		// finding says undetermined, with the latencies only), never a
		// wrong cause.
		for _, f := range got[ep] {
			if f[accelschema.AttrFindingCause] != accelschema.CauseUndetermined {
				return f
			}
		}
		return nil
	}
	// Waiting ends when every endpoint has a finding that names a cause;
	// which cause is checked below, with every finding seen.
	e2etest.AwaitResult(4*time.Minute, func() (string, bool) {
		got = regressions(readEvents(t, filepath.Join(fleet.OutDir, "events.jsonl")))
		for ep := range want {
			if named(ep) == nil {
				return "", false
			}
		}
		return "", true
	})
	var problems []string
	for ep, cause := range want {
		f := named(ep)
		if f == nil {
			problems = append(problems, ep+": no latency_regression finding naming a cause")
			continue
		}
		c := fmt.Sprint(f[accelschema.AttrFindingCause])
		ev := fmt.Sprint(f[accelschema.AttrFindingEvidence])
		if c != cause || !strings.Contains(ev, evidence[cause]) || f[accelschema.AttrFindingAction] == nil {
			problems = append(problems, fmt.Sprintf("%s: first cause named %s (%s), want %s with %s…", ep, c, ev, cause, evidence[cause]))
		}
	}
	if len(problems) > 0 {
		var seen []string
		for ep, fs := range got {
			for _, f := range fs {
				seen = append(seen, fmt.Sprintf("%s: %v %v", ep, f[accelschema.AttrFindingCause], f[accelschema.AttrFindingEvidence]))
			}
		}
		sort.Strings(seen)
		t.Fatalf("%s\nlatency_regression findings:\n  %s", strings.Join(problems, "\n"), strings.Join(seen, "\n  "))
	}
}

// regressions are the latency_regression findings of each endpoint, in
// the order the file has them.
func regressions(events []map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, ev := range events {
		if ev["event.name"] != accelschema.EventFinding || ev[accelschema.AttrFindingKind] != accelschema.FindingLatencyRegression {
			continue
		}
		ep := fmt.Sprint(ev[accelschema.AttrInferenceEndpoint])
		out[ep] = append(out[ep], ev)
	}
	return out
}
