package normalize

import (
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Server kinds, as gen_ai.provider.name spells them.
const (
	VLLM   = accelschema.ServerVLLM
	SGLang = accelschema.ServerSGLang
	Triton = accelschema.ServerTriton
	TGI    = accelschema.ServerTGI
	NIM    = accelschema.ServerNIM
)

// Kinds lists the server kinds in detection tie-break order: vLLM names are
// also accepted from NIM, and a tie means plain vLLM.
var Kinds = []string{VLLM, SGLang, Triton, TGI, NIM}

// Kind says how a point is represented.
type Kind uint8

const (
	KindGauge Kind = iota
	KindCounter
	KindHistogram
)

// Agg says how the series of one output (engines, ranks, model versions)
// combine into the single series emitted per model.
type Agg uint8

const (
	// AggSum adds: counts, queue depths, histograms.
	AggSum Agg = iota
	// AggMean averages: ratios such as KV-cache use, which every engine
	// reports for its own equally sized cache.
	AggMean
)

// output is one schema series a family feeds.
type output struct {
	metric    string
	kind      Kind
	attrKey   string // data point attribute, "" when the metric has none
	attrValue string // fixed value of attrKey; "" when it comes from a label
	agg       Agg
}

// slot names the output for preference between families: of the families
// feeding one slot, only the most preferred present in a scrape is used.
func (o output) slot() string { return o.metric + "\x00" + o.attrValue }

var (
	outRunning      = output{metric: accelschema.MetricRequestsRunning, kind: KindGauge, agg: AggSum}
	outWaiting      = output{metric: accelschema.MetricRequestsWaiting, kind: KindGauge, agg: AggSum}
	outKVCache      = output{metric: accelschema.MetricKVCacheUtilization, kind: KindGauge, agg: AggMean}
	outHitRatio     = output{metric: accelschema.MetricPrefixCacheHitRatio, kind: KindGauge, agg: AggMean}
	outCacheQueries = output{metric: accelschema.MetricPrefixCacheQueries, kind: KindCounter}
	outCacheHits    = output{metric: accelschema.MetricPrefixCacheHits, kind: KindCounter}
	outPreemptions  = output{metric: accelschema.MetricPreemptions, kind: KindCounter}
	outRequests     = output{metric: accelschema.MetricRequests, kind: KindCounter, attrKey: accelschema.AttrFinishReason}
	outTTFT         = output{metric: accelschema.MetricTimeToFirstToken, kind: KindHistogram}
	outTPOT         = output{metric: accelschema.MetricTimePerOutputToken, kind: KindHistogram}
	outITL          = output{metric: accelschema.MetricInterTokenLatency, kind: KindHistogram}
	outDuration     = output{metric: accelschema.MetricRequestDuration, kind: KindHistogram}
	outQueue        = output{metric: accelschema.MetricQueueDuration, kind: KindHistogram}
)

func tokens(tokenType string) output {
	return output{metric: accelschema.MetricTokens, kind: KindCounter, attrKey: accelschema.AttrTokenType, attrValue: tokenType}
}

func requests(reason string) output {
	o := outRequests
	o.attrValue = reason
	return o
}

// Finish reasons for servers that only count successes and failures.
const (
	FinishSuccess = "success"
	FinishError   = "error"
)

// part is what one exposed sample contributes to its output's series.
type part uint8

const (
	partValue   part = iota // gauge or counter value
	partCreated             // _created: when the series started (Unix seconds)
	partBucket              // histogram _bucket{le}
	partSum                 // histogram _sum
	partCount               // histogram _count
)

// family describes one exposed metric family and the output it feeds.
type family struct {
	// expo is how the family is exposed.
	expo exposition
	// name is the family name without the server prefix: for counters
	// without the _total suffix, for raw samples the full sample name.
	name string
	out  output
	// rank orders families feeding the same slot: 0 is preferred, a higher
	// rank (deprecated V0 name) is used only when no lower one is present.
	rank int
	// divisor converts the source unit to the schema's (ms → s: 1000); it
	// applies to values, sums and bucket bounds, never to counts. Dividing
	// rounds correctly where multiplying by 1e-3 would not (300 ms → 0.3 s).
	divisor float64
	// attrLabel names the label whose value becomes the output's data
	// point attribute (vLLM finished_reason).
	attrLabel string
	// drop lists labels that do not identify a source series and whose
	// samples are added together (Triton's failure reason).
	drop []string
	// feeds says which part of a histogram output a raw counter feeds
	// (Triton's microsecond totals and request counts).
	feeds part
}

type exposition uint8

const (
	expoGauge     exposition = iota // name
	expoCounter                     // name_total, name_created
	expoHistogram                   // name_bucket, name_sum, name_count, name_created
	expoRaw                         // the sample name exactly, no _created
)

func gauge(name string, out output) family { return family{expo: expoGauge, name: name, out: out} }
func counter(name string, out output) family {
	return family{expo: expoCounter, name: name, out: out}
}

func histogram(name string, out output) family {
	return family{expo: expoHistogram, name: name, out: out}
}

// raw maps one sample name as is, feeding an output's value or one part of a
// histogram output.
func raw(sample string, out output) family {
	f := family{expo: expoRaw, name: sample, out: out, feeds: partValue}
	if out.kind == KindHistogram {
		f.feeds = partCount
	}
	return f
}

func (f family) fallback(rank int) family     { f.rank = rank; return f }
func (f family) per(d float64) family         { f.divisor = d; return f }
func (f family) attrFrom(label string) family { f.attrLabel = label; return f }
func (f family) dropping(l ...string) family  { f.drop = l; return f }
func (f family) sum() family                  { f.feeds = partSum; return f }

// server describes one server kind's exposition.
type server struct {
	kind string
	// dialects are the generations of the kind's exposition, current
	// first. Most kinds have one.
	dialects []dialect
}

// dialect is one generation of a server's metric names, told apart from the
// others by the label that carries the model: each sample is read by the
// first dialect whose model label it has (by the first dialect when it has
// none of them), so two generations can give one family name different
// meanings (SGLang's cache_hit_rate, a percentage before the renames).
type dialect struct {
	// prefixes are tried in order; a family under a later prefix ranks
	// after the same family under an earlier one, so a server exposing
	// both spellings is not counted twice.
	prefixes []string
	// modelLabel carries the served model name; "" when there is none.
	modelLabel string
	families   []family
}

// vllmFamilies are vLLM's engine metrics (vllm/v1/metrics/loggers.py, and the
// V0 engine's vllm/engine/metrics.py), as exposed by prometheus_client.
var vllmFamilies = []family{
	gauge("num_requests_running", outRunning),
	gauge("num_requests_waiting", outWaiting),
	gauge("kv_cache_usage_perc", outKVCache),
	// V0, and V1 up to 0.10 beside the new name.
	gauge("gpu_cache_usage_perc", outKVCache).fallback(1),
	// V0 only: the engine's own rolling hit rate; used when the counters
	// below are absent.
	gauge("gpu_prefix_cache_hit_rate", outHitRatio),
	counter("prefix_cache_queries", outCacheQueries),
	counter("gpu_prefix_cache_queries", outCacheQueries).fallback(1),
	counter("prefix_cache_hits", outCacheHits),
	counter("gpu_prefix_cache_hits", outCacheHits).fallback(1),
	counter("prompt_tokens", tokens(accelschema.TokenInput)),
	counter("generation_tokens", tokens(accelschema.TokenOutput)),
	counter("prompt_tokens_cached", tokens(accelschema.TokenCached)),
	counter("num_preemptions", outPreemptions),
	counter("request_success", outRequests).attrFrom("finished_reason"),
	histogram("time_to_first_token_seconds", outTTFT),
	// Per request (semantic-convention TPOT) since 0.11 …
	histogram("request_time_per_output_token_seconds", outTPOT),
	// … before that the only per-token histogram (deprecated alias of
	// inter_token_latency_seconds since 0.11).
	histogram("time_per_output_token_seconds", outTPOT).fallback(1),
	histogram("inter_token_latency_seconds", outITL),
	histogram("e2e_request_latency_seconds", outDuration),
	histogram("request_queue_time_seconds", outQueue),
}

var servers = []server{
	{
		kind: VLLM,
		dialects: []dialect{{
			prefixes:   []string{"vllm:", "ray_vllm:"},
			modelLabel: "model_name",
			families:   vllmFamilies,
		}},
	},
	{
		kind:     SGLang,
		dialects: []dialect{sglangCurrent, sglangLegacy},
	},
	{
		// Triton's per-model metrics (prometheus-cpp: counters carry no
		// _total suffix and no _created series).
		kind: Triton,
		dialects: []dialect{{
			prefixes:   []string{""},
			modelLabel: "model",
			families: []family{
				gauge("nv_inference_pending_request_count", outWaiting),
				raw("nv_inference_request_success", requests(FinishSuccess)),
				raw("nv_inference_request_failure", requests(FinishError)).dropping("reason"),
				// Cumulative microseconds over successful requests: a
				// bucketless histogram keeps the mean exact.
				raw("nv_inference_request_duration_us", outDuration).sum().per(1e6),
				raw("nv_inference_request_success", outDuration),
				raw("nv_inference_queue_duration_us", outQueue).sum().per(1e6),
				raw("nv_inference_request_success", outQueue),
				// Opt-in (histogram_latencies=true), milliseconds; for
				// decoupled LLM backends the first response is the first token.
				histogram("nv_inference_first_response_histogram_ms", outTTFT).per(1e3),
			},
		}},
	},
	{
		// text-generation-inference router (metrics-exporter-prometheus).
		kind: TGI,
		dialects: []dialect{{
			prefixes: []string{""},
			families: []family{
				gauge("tgi_batch_current_size", outRunning),
				gauge("tgi_queue_size", outWaiting),
				raw("tgi_request_success", requests(FinishSuccess)),
				raw("tgi_request_failure", requests(FinishError)).dropping("err"),
				// Token totals are the sums of the per-request histograms.
				raw("tgi_request_input_length_sum", tokens(accelschema.TokenInput)),
				raw("tgi_request_generated_tokens_sum", tokens(accelschema.TokenOutput)),
				histogram("tgi_request_duration", outDuration),
				histogram("tgi_request_queue_duration", outQueue),
				// inference time / generated tokens: includes prefill.
				histogram("tgi_request_mean_time_per_token_duration", outTPOT),
			},
		}},
	},
	{
		// NIM for LLMs serves vLLM's names without the prefix; newer
		// releases add the vllm: spelling, which ranks after.
		kind: NIM,
		dialects: []dialect{{
			prefixes:   []string{"", "vllm:"},
			modelLabel: "model_name",
			families:   vllmFamilies,
		}},
	},
}
