package sim_test

import (
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// meanOver is a histogram's mean over the simulated interval [from, to).
func meanOver(d demo, t *testing.T, pod string, from, to float64, pick func(sim.InferenceSnapshot) sim.Histogram) float64 {
	t.Helper()
	p := d.pod(t, pod)
	a, b := pick(d.w.Inference(p, from)), pick(d.w.Inference(p, to))
	if b.Count <= a.Count {
		t.Fatalf("%s served nothing in [%g, %g)", pod, from, to)
	}
	return (b.Sum - a.Sum) / (b.Count - a.Count)
}

func ttft(s sim.InferenceSnapshot) sim.Histogram { return s.TTFT }
func itl(s sim.InferenceSnapshot) sim.Histogram  { return s.ITL }

// The demo's injected latency regressions (fleet.yaml, from 90m) show in
// the servers' own series together with the signals that explain them,
// and nothing before.
func TestDemoRegressionsComeWithTheirSignals(t *testing.T) {
	d := newDemo(t)

	// KV-cache-bound: chat/llm-serving's prompts turn four times as long.
	before := meanOver(d, t, "llm-serving-0", 80*minute, 88*minute, ttft)
	after := meanOver(d, t, "llm-serving-0", 92*minute, 100*minute, ttft)
	if after < 2*before {
		t.Errorf("llm-serving TTFT %.3f s → %.3f s: want at least doubled", before, after)
	}
	p := d.pod(t, "llm-serving-0")
	if kv := d.w.Inference(p, 85*minute).KVUsage; kv >= 0.9 {
		t.Errorf("llm-serving KV cache %.2f before the long prompts", kv)
	}
	if kv := d.w.Inference(p, 95*minute).KVUsage; kv < 0.97 {
		t.Errorf("llm-serving KV cache %.2f with long prompts: want full", kv)
	}
	pre := func(at float64) float64 { return d.w.Inference(p, at).Preemptions }
	if pre(88*minute)-pre(80*minute) != 0 || pre(100*minute)-pre(92*minute) <= 0 {
		t.Errorf("preemptions: %g before, %g after: want none, then some", pre(88*minute)-pre(80*minute), pre(100*minute)-pre(92*minute))
	}

	// Throttling: H100 GPU 0 (search/vllm-llama's MIG instance) for heat.
	for _, pick := range []func(sim.InferenceSnapshot) sim.Histogram{ttft, itl} {
		before := meanOver(d, t, "vllm-llama-6b9f7d4c8-k2x7p", 80*minute, 88*minute, pick)
		after := meanOver(d, t, "vllm-llama-6b9f7d4c8-k2x7p", 92*minute, 100*minute, pick)
		if after < 1.6*before {
			t.Errorf("vllm-llama latency %.4f s → %.4f s: want throttled", before, after)
		}
	}
	if r := d.gpu(t, "gpu-h100-a", 0, 0, 85*minute).ThrottleReasons; r != 0 {
		t.Errorf("throttle reasons %#x before the fault", r)
	}
	if r := d.gpu(t, "gpu-h100-a", 0, 0, 95*minute).ThrottleReasons; r&0x60 == 0 {
		t.Errorf("throttle reasons %#x: want thermal", r)
	}

	// Unhealthy device: XID 92 on A100 GPU 4 (search/vllm-embed) slows it
	// for thirty minutes, then it recovers.
	base := meanOver(d, t, "vllm-embed-5c8d9b7f6-q4w8z", 80*minute, 88*minute, itl)
	sick := meanOver(d, t, "vllm-embed-5c8d9b7f6-q4w8z", 91*minute, 110*minute, itl)
	well := meanOver(d, t, "vllm-embed-5c8d9b7f6-q4w8z", 122*minute, 130*minute, itl)
	if sick < 1.6*base || well > 1.2*base {
		t.Errorf("vllm-embed ITL %.4f → %.4f → %.4f s: want slowed after the XID, then back", base, sick, well)
	}
	// Noisy neighbour: a batch job starts beside support/vllm-faq on L4
	// GPU 2 (time-sliced); its own utilization shows in the per-pod data.
	for _, pick := range []func(sim.InferenceSnapshot) sim.Histogram{ttft, itl} {
		before := meanOver(d, t, "vllm-faq-5b7c9d8e6-f4g5h", 80*minute, 88*minute, pick)
		after := meanOver(d, t, "vllm-faq-5b7c9d8e6-f4g5h", 92*minute, 100*minute, pick)
		if after < 1.6*before {
			t.Errorf("vllm-faq latency %.4f s → %.4f s: want slowed by its neighbour", before, after)
		}
	}
	neighbour := func(at float64) int64 {
		for _, e := range d.w.NodeGPUs(d.node(t, "gpu-l4-a"), at) {
			for _, u := range e.PerPod {
				if e.GPU.Index == 2 && u.Pod.Name == "embed-backfill-0" {
					return u.GPUUtil
				}
			}
		}
		t.Fatal("no per-pod reading of embed-backfill-0 on L4 GPU 2")
		return 0
	}
	if b, a := neighbour(85*minute), neighbour(95*minute); b != 0 || a < 70 {
		t.Errorf("embed-backfill's own GPU utilization %d%% → %d%%: want idle, then busy", b, a)
	}
	if x := d.gpu(t, "gpu-a100-a", 4, -1, 95*minute).XID; x != 92 {
		t.Errorf("A100 GPU 4 last XID %d, want 92", x)
	}
}
