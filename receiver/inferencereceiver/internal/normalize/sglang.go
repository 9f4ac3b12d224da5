package normalize

import (
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// sglangCurrent is SGLang's exposition since its metrics were renamed
// (python/sglang/srt/metrics/collector.py, with --enable-metrics): the model
// in model_name, scheduler gauges per rank, cache_hit_rate a ratio.
var sglangCurrent = dialect{
	prefixes:   []string{"sglang:"},
	modelLabel: "model_name",
	families: []family{
		gauge("num_running_reqs", outRunning),
		gauge("num_queue_reqs", outWaiting),
		gauge("token_usage", outKVCache),
		gauge("cache_hit_rate", outHitRatio),
		counter("prompt_tokens", tokens(accelschema.TokenInput)),
		counter("generation_tokens", tokens(accelschema.TokenOutput)),
		counter("cached_tokens", tokens(accelschema.TokenCached)),
		// SGLang counts requests without an outcome.
		counter("num_requests", outRequests),
		histogram("time_to_first_token_seconds", outTTFT),
		histogram("time_per_output_token_seconds", outTPOT),
		histogram("inter_token_latency_seconds", outITL),
		histogram("e2e_request_latency_seconds", outDuration),
		histogram("queue_time_seconds", outQueue),
	},
}

// sglangLegacy is SGLang's exposition before the renames
// (python/sglang/srt/metrics/metrics_collector.py, up to 0.3): every family
// labelled name=<model>, and no ranks.
//
// Its cache_hit_rate is a percentage: the collector's console logger printed
// the same field with a "%" after it, and the documented sample reads 10.61.
// The renamed exposition sets the radix cache's hit fraction itself. Both
// spell the family the same, so the unit follows the model label; a sample
// with neither label is read as the current dialect.
//
// Not mapped: new_token and cached_token are gauges holding the last prefill
// batch's token counts, set again at every batch; they are not cumulative,
// so they can feed neither gen_ai.server.tokens nor the prefix-cache
// counters (read as counters, every smaller batch would look like a
// restart). Their lifetime ratio is cache_hit_rate. Also left out:
// waiting_request_latency_seconds and decode_request_latency_seconds, whose
// intervals the old code does not pin down, and the config gauges
// (max_total_num_tokens, context_len, …), new_seq and gen_throughput.
var sglangLegacy = dialect{
	prefixes:   []string{"sglang:"},
	modelLabel: "name",
	families: []family{
		gauge("num_requests_running", outRunning),
		// The waiting queue after each prefill batch was formed, the value
		// the scheduler also logs as #queue-req; num_requests_waiting is
		// fed from a different field, so it is used only without it.
		gauge("queue_req", outWaiting),
		gauge("num_requests_waiting", outWaiting).fallback(1),
		gauge("token_usage", outKVCache),
		gauge("cache_hit_rate", outHitRatio).per(100),
		counter("prompt_tokens", tokens(accelschema.TokenInput)),
		counter("generation_tokens", tokens(accelschema.TokenOutput)),
		histogram("time_to_first_token_seconds", outTTFT),
		histogram("time_per_output_token_seconds", outTPOT),
		histogram("e2e_request_latency_seconds", outDuration),
	},
}
