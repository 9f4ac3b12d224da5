package inference

import (
	"strconv"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// vLLM V1 metric families (vllm/v1/metrics/loggers.py), in the order the
// engine registers them.

// renderVLLM writes a vLLM /metrics page. created is the unix time the
// server registered its metrics (the `_created` samples).
func renderVLLM(w *writer, model string, s *sim.InferenceSnapshot, created float64) []byte {
	base := []label{{"engine", "0"}, {"model_name", model}}
	gauge := func(name, help string, v float64) {
		w.header(name, help, "gauge")
		w.sample(name, base, v)
	}
	counter := func(name, help string, v float64) {
		w.counterHeader(name+"_total", help)
		w.sample(name+"_total", base, v)
		w.createdHeader(name+"_created", help)
		w.sample(name+"_created", base, created)
	}
	gauge("vllm:num_requests_running", "Number of requests in model execution batches.", float64(s.Running))
	gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", float64(s.Waiting))
	gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", s.KVUsage)
	counter("vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.", s.PrefixQueries)
	counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.", s.PrefixHits)
	counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", s.Preemptions)
	counter("vllm:prompt_tokens", "Number of prefill tokens processed.", s.PromptTokens)
	counter("vllm:generation_tokens", "Number of generation tokens processed.", s.GenTokens)

	const successHelp = "Count of successfully processed requests."
	reasons := []struct {
		name string
		v    float64
	}{{"stop", s.FinishedStop}, {"length", s.FinishedLen}, {"abort", s.FinishedAbort}, {"error", s.FinishedError}}
	w.counterHeader("vllm:request_success_total", successHelp)
	for _, r := range reasons {
		w.sample("vllm:request_success_total", with(base, label{"finished_reason", r.name}), r.v)
	}
	w.createdHeader("vllm:request_success_created", successHelp)
	for _, r := range reasons {
		w.sample("vllm:request_success_created", with(base, label{"finished_reason", r.name}), created)
	}

	histogram(w, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", base, &s.TTFT, created, true)
	histogram(w, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", base, &s.ITL, created, true)
	histogram(w, "vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", base, &s.TPOT, created, true)
	histogram(w, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", base, &s.E2E, created, true)
	histogram(w, "vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", base, &s.Queue, created, true)

	w.header("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", "gauge")
	w.sample("vllm:cache_config_info", []label{
		{"block_size", "16"}, {"cache_dtype", "auto"}, {"enable_prefix_caching", "True"}, {"engine", "0"},
		{"gpu_memory_utilization", "0.9"}, {"num_gpu_blocks", itoa(s.MaxTotalTokens / 16)},
	}, 1)
	return w.end()
}

// histogram writes a histogram family. With created (prometheus_client's
// default registry) the samples are buckets, _count, _sum, then a separate
// `_created` gauge family; without (multiprocess mode, as SGLang runs) the
// order is _sum, buckets, _count.
func histogram(w *writer, name, help string, labels []label, h *sim.Histogram, created float64, withCreated bool) {
	w.header(name, help, "histogram")
	line := func(i int, le string, v float64) {
		w.series(name+"_bucket", with(labels, label{"le", le}), v)
		if w.om && w.ex != nil {
			if x, ok := w.ex.bucket(name, h, i, w.now); ok {
				w.b = appendExemplar(w.b, x)
			}
		}
		w.b = append(w.b, '\n')
	}
	bucket := func() {
		for i, bound := range h.Bounds {
			line(i, string(pyFloat(nil, bound)), h.Cumulative[i])
		}
		line(len(h.Bounds), "+Inf", h.Count)
	}
	if withCreated {
		bucket()
		w.sample(name+"_count", labels, h.Count)
		w.sample(name+"_sum", labels, h.Sum)
		w.createdHeader(name+"_created", help)
		w.sample(name+"_created", labels, created)
		return
	}
	w.sample(name+"_sum", labels, h.Sum)
	bucket()
	w.sample(name+"_count", labels, h.Count)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
