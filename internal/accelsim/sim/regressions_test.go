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

// The demo's injected latency regressions (fleet.yaml, from 50m) show in
// the servers' own series together with the signals that explain them,
// and nothing before.
func TestDemoRegressionsComeWithTheirSignals(t *testing.T) {
	d := newDemo(t)

	// KV-cache-bound: chat/llm-serving's prompts turn four times as long.
	before := meanOver(d, t, "llm-serving-0", 40*minute, 48*minute, ttft)
	after := meanOver(d, t, "llm-serving-0", 52*minute, 60*minute, ttft)
	if after < 2*before {
		t.Errorf("llm-serving TTFT %.3f s → %.3f s: want at least doubled", before, after)
	}
	p := d.pod(t, "llm-serving-0")
	if kv := d.w.Inference(p, 45*minute).KVUsage; kv >= 0.9 {
		t.Errorf("llm-serving KV cache %.2f before the long prompts", kv)
	}
	if kv := d.w.Inference(p, 55*minute).KVUsage; kv < 0.97 {
		t.Errorf("llm-serving KV cache %.2f with long prompts: want full", kv)
	}
	pre := func(at float64) float64 { return d.w.Inference(p, at).Preemptions }
	if pre(48*minute)-pre(40*minute) != 0 || pre(60*minute)-pre(52*minute) <= 0 {
		t.Errorf("preemptions: %g before, %g after: want none, then some", pre(48*minute)-pre(40*minute), pre(60*minute)-pre(52*minute))
	}

	// Throttling: H100 GPU 0 (search/vllm-llama's MIG instance) for heat.
	for _, pick := range []func(sim.InferenceSnapshot) sim.Histogram{ttft, itl} {
		before := meanOver(d, t, "vllm-llama-6b9f7d4c8-k2x7p", 40*minute, 48*minute, pick)
		after := meanOver(d, t, "vllm-llama-6b9f7d4c8-k2x7p", 52*minute, 60*minute, pick)
		if after < 1.6*before {
			t.Errorf("vllm-llama latency %.4f s → %.4f s: want throttled", before, after)
		}
	}
	if r := d.gpu(t, "gpu-h100-a", 0, 0, 45*minute).ThrottleReasons; r != 0 {
		t.Errorf("throttle reasons %#x before the fault", r)
	}
	if r := d.gpu(t, "gpu-h100-a", 0, 0, 55*minute).ThrottleReasons; r&0x60 == 0 {
		t.Errorf("throttle reasons %#x: want thermal", r)
	}

	// Unhealthy device: XID 92 on A100 GPU 4 (search/vllm-embed) slows it
	// for ten minutes, then it recovers.
	base := meanOver(d, t, "vllm-embed-5c8d9b7f6-q4w8z", 40*minute, 48*minute, itl)
	sick := meanOver(d, t, "vllm-embed-5c8d9b7f6-q4w8z", 51*minute, 58*minute, itl)
	well := meanOver(d, t, "vllm-embed-5c8d9b7f6-q4w8z", 62*minute, 70*minute, itl)
	if sick < 1.6*base || well > 1.2*base {
		t.Errorf("vllm-embed ITL %.4f → %.4f → %.4f s: want slowed after the XID, then back", base, sick, well)
	}
	if x := d.gpu(t, "gpu-a100-a", 4, -1, 55*minute).XID; x != 92 {
		t.Errorf("A100 GPU 4 last XID %d, want 92", x)
	}
}
