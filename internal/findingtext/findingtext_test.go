package findingtext

import "testing"

func TestEmptyFields(t *testing.T) {
	for _, good := range []string{
		"FINDING latency_regression       support/vllm-support (team support) on gpu-l4-a: add replicas  [cause=queueing ttft_p95=4.1]",
		"latency_regression of chat/llm-serving (meta-llama/Llama-3.1-70B-Instruct) on 2 nodes (gpu-a, gpu-b): kv_cache_pressure; give the KV cache more room",
		"peak_memory_ratio=0.120 window=1h0m0s current=3g.40gb price_per_hour=1.2300",
		"move search/vllm-embed to a 1g.10gb MIG instance (0.143 of the GPU instead of 1.000)",
	} {
		if got := EmptyFields(good); len(got) != 0 {
			t.Errorf("%q: %v, want none", good, got)
		}
	}
	for _, bad := range []string{
		"FINDING latency_regression       support/vllm-support (team support) on : add replicas",
		"latency_regression of chat/llm-serving on  : kv_cache_pressure",
		"peak_memory_ratio= window=1h",
		"find what starves research/x on : its accelerator.tensor.active",
		"pod /notebook-bob",
		"workload () on gpu-a",
		"support/vllm-support (team ) on gpu-a",
		"run x on  at $1 instead",
		"cause=undetermined ; compare",
		"",
		"the workload on ",
	} {
		if got := EmptyFields(bad); len(got) == 0 {
			t.Errorf("%q: no empty field found", bad)
		}
	}
}
