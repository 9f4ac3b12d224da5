package inference

import (
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// renderSGLang writes an SGLang /metrics page (--enable-metrics). SGLang
// runs prometheus_client in multiprocess mode: no `_created` samples, and
// scheduler gauges carry the tensor-parallel rank while tokenizer-manager
// counters and histograms carry only the model name.
func renderSGLang(w *writer, model string, s *sim.InferenceSnapshot) []byte {
	tok := []label{{"model_name", model}}
	sched := []label{{"model_name", model}, {"tp_rank", "0"}}
	counter := func(name, help string, v float64) {
		w.counterHeader(name, help)
		w.sample(name, tok, v)
	}
	gauge := func(name, help string, v float64) {
		w.header(name, help, "gauge")
		w.sample(name, sched, v)
	}
	counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", s.PromptTokens)
	counter("sglang:generation_tokens_total", "Number of generation tokens processed.", s.GenTokens)
	counter("sglang:cached_tokens_total", "Number of cached prompt tokens.", s.CachedTokens)
	counter("sglang:num_requests_total", "Number of requests processed.", s.Requests)
	histogram(w, "sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", tok, &s.TTFT, 0, false)
	histogram(w, "sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", tok, &s.ITL, 0, false)
	histogram(w, "sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", tok, &s.E2E, 0, false)
	gauge("sglang:num_running_reqs", "The number of running requests.", float64(s.Running))
	gauge("sglang:num_used_tokens", "The number of used tokens.", float64(int64(s.KVUsage*float64(s.MaxTotalTokens))))
	gauge("sglang:token_usage", "The token usage.", s.KVUsage)
	gauge("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", float64(s.MaxTotalTokens))
	gauge("sglang:gen_throughput", "The generation throughput (token/s).", s.GenThroughput)
	gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", float64(s.Waiting))
	gauge("sglang:cache_hit_rate", "The prefix cache hit rate.", s.CacheHitRate)
	return w.end()
}
