package normalize

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
)

func fixture(t testing.TB, name string) []promscrape.Sample[string] {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", name))
	require.NoError(t, err)
	doc := promscrape.Parse(string(b))
	require.Zero(t, doc.Errors.Count, "%v", doc.Errors.First)
	return doc.Samples
}

func parse(t testing.TB, text string) []promscrape.Sample[string] {
	t.Helper()
	doc := promscrape.Parse(text)
	require.Zero(t, doc.Errors.Count, "%v", doc.Errors.First)
	return doc.Samples
}

func find(t testing.TB, r Result, metric, attr string) []Point {
	t.Helper()
	var out []Point
	for _, p := range r.Points {
		if p.Metric == metric && p.AttrValue == attr {
			out = append(out, p)
		}
	}
	return out
}

func TestDetect(t *testing.T) {
	for fixtureName, want := range map[string]string{
		"vllm_v1.txt":             VLLM,
		"vllm_v0.txt":             VLLM,
		"vllm_v0_v1_mix.txt":      VLLM,
		"vllm_custom_buckets.txt": VLLM,
		"sglang.txt":              SGLang,
		"sglang_legacy.txt":       SGLang,
		"triton.txt":              Triton,
		"tgi.txt":                 TGI,
		"nim.txt":                 NIM,
	} {
		got, ok := Detect(fixture(t, fixtureName))
		assert.True(t, ok, fixtureName)
		assert.Equal(t, want, got, fixtureName)
	}
	_, ok := Detect(parse(t, "node_load1 0.5\ngo_goroutines 12\n"))
	assert.False(t, ok)
}

func TestDeprecatedNamesOnlyAsFallback(t *testing.T) {
	both := parse(t, `vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
vllm:gpu_cache_usage_perc{engine="0",model_name="m"} 0.99
vllm:gpu_prefix_cache_queries_total{engine="0",model_name="m"} 500.0
vllm:prefix_cache_queries_total{engine="0",model_name="m"} 100.0
`)
	r := Normalize(VLLM, both, "")
	kv := find(t, r, accelschema.MetricKVCacheUtilization, "")
	require.Len(t, kv, 1)
	assert.Equal(t, 0.25, kv[0].Value)
	q := find(t, r, accelschema.MetricPrefixCacheQueries, "")
	require.Len(t, q, 1)
	assert.Equal(t, 100.0, q[0].Value)

	old := parse(t, `vllm:gpu_cache_usage_perc{model_name="m"} 0.99
vllm:gpu_prefix_cache_queries_total{model_name="m"} 500.0
`)
	r = Normalize(VLLM, old, "")
	assert.Equal(t, 0.99, find(t, r, accelschema.MetricKVCacheUtilization, "")[0].Value)
	assert.Equal(t, 500.0, find(t, r, accelschema.MetricPrefixCacheQueries, "")[0].Value)
}

// The preference is per model: one model on new names, another on old ones.
func TestPreferencePerModel(t *testing.T) {
	r := Normalize(VLLM, parse(t, `vllm:kv_cache_usage_perc{model_name="a"} 0.1
vllm:gpu_cache_usage_perc{model_name="a"} 0.9
vllm:gpu_cache_usage_perc{model_name="b"} 0.7
`), "")
	kv := find(t, r, accelschema.MetricKVCacheUtilization, "")
	require.Len(t, kv, 2)
	got := map[string]float64{kv[0].Model: kv[0].Value, kv[1].Model: kv[1].Value}
	assert.Equal(t, map[string]float64{"a": 0.1, "b": 0.7}, got)
}

func TestRayPrefix(t *testing.T) {
	r := Normalize(VLLM, parse(t, `ray_vllm:num_requests_running{model_name="m",engine="0",WorkerId="abc"} 4.0
ray_vllm:prompt_tokens_total{model_name="m",engine="0",WorkerId="abc"} 900.0
`), "")
	assert.Equal(t, 4.0, find(t, r, accelschema.MetricRequestsRunning, "")[0].Value)
	p := find(t, r, accelschema.MetricTokens, accelschema.TokenInput)
	require.Len(t, p, 1)
	assert.Equal(t, `engine="0",WorkerId="abc"`, p[0].Source)
}

// NIM releases that serve both spellings are not counted twice.
func TestNIMBothSpellings(t *testing.T) {
	r := Normalize(NIM, parse(t, `num_requests_running{model_name="m"} 3.0
vllm:num_requests_running{model_name="m"} 3.0
prompt_tokens_total{model_name="m"} 10.0
vllm:prompt_tokens_total{model_name="m"} 10.0
`), "")
	require.Len(t, find(t, r, accelschema.MetricRequestsRunning, ""), 1)
	require.Len(t, find(t, r, accelschema.MetricTokens, accelschema.TokenInput), 1)
}

func TestTritonUnitsAndParts(t *testing.T) {
	r := Normalize(Triton, fixture(t, "triton.txt"), "")
	var models []string
	for _, p := range r.Points {
		if !slices.Contains(models, p.Model) {
			models = append(models, p.Model)
		}
	}
	assert.ElementsMatch(t, []string{"ensemble_llama3", "tensorrt_llm"}, models)

	// tensorrt_llm versions 1 and 2 stay separate sources (aggregated later).
	dur := find(t, r, accelschema.MetricRequestDuration, "")
	var trt []Point
	for _, p := range dur {
		if p.Model == "tensorrt_llm" {
			trt = append(trt, p)
		}
	}
	require.Len(t, trt, 2)
	slices.SortFunc(trt, func(a, b Point) int { return strings.Compare(a.Source, b.Source) })
	assert.Equal(t, `version="1"`, trt[0].Source)
	assert.Equal(t, uint64(90), trt[0].Hist.Count, "count = successful requests")
	assert.Empty(t, trt[0].Hist.Bounds)
	assert.Equal(t, []uint64{90}, trt[0].Hist.Counts)
	assert.True(t, trt[0].Hist.HasSum)

	// Failures add up over reasons.
	for _, p := range find(t, r, accelschema.MetricRequests, FinishError) {
		if p.Model == "ensemble_llama3" {
			assert.Equal(t, 2.0, p.Value)
		}
	}

	// The first-response histogram is in ms; bounds and sum come out in s.
	ttft := find(t, r, accelschema.MetricTimeToFirstToken, "")
	require.NotEmpty(t, ttft)
	assert.Equal(t, []float64{0.1, 0.5, 2, 5}, ttft[0].Hist.Bounds)
}

func TestTritonMicrosecondsToSeconds(t *testing.T) {
	r := Normalize(Triton, parse(t, `nv_inference_request_success{model="m",version="1"} 4
nv_inference_request_duration_us{model="m",version="1"} 2500000
nv_inference_queue_duration_us{model="m",version="1"} 300
`), "")
	d := find(t, r, accelschema.MetricRequestDuration, "")
	require.Len(t, d, 1)
	assert.Equal(t, 2.5, d[0].Hist.Sum)
	assert.Equal(t, uint64(4), d[0].Hist.Count)
	q := find(t, r, accelschema.MetricQueueDuration, "")
	require.Len(t, q, 1)
	assert.Equal(t, 0.0003, q[0].Hist.Sum)
}

// Without counter_latencies Triton has counts but no totals: no duration
// histogram rather than one claiming zero seconds.
func TestTritonWithoutLatencyCounters(t *testing.T) {
	r := Normalize(Triton, parse(t, `nv_inference_request_success{model="m",version="1"} 4
`), "")
	assert.Empty(t, find(t, r, accelschema.MetricRequestDuration, ""))
	assert.Len(t, find(t, r, accelschema.MetricRequests, FinishSuccess), 1)
}

func TestHistogramConversion(t *testing.T) {
	r := Normalize(VLLM, parse(t, `vllm:e2e_request_latency_seconds_bucket{le="2.5",model_name="m"} 7.0
vllm:e2e_request_latency_seconds_bucket{le="0.5",model_name="m"} 2.0
vllm:e2e_request_latency_seconds_bucket{le="+Inf",model_name="m"} 9.0
vllm:e2e_request_latency_seconds_bucket{le="1",model_name="m"} 2.0
vllm:e2e_request_latency_seconds_sum{model_name="m"} 14.25
vllm:e2e_request_latency_seconds_count{model_name="m"} 9.0
vllm:e2e_request_latency_seconds_created{model_name="m"} 1.7672256e+09
`), "")
	require.Empty(t, r.Errors)
	p := find(t, r, accelschema.MetricRequestDuration, "")
	require.Len(t, p, 1)
	assert.Equal(t, Histogram{Bounds: []float64{0.5, 1, 2.5}, Counts: []uint64{2, 0, 5, 2}, Count: 9, Sum: 14.25, HasSum: true}, p[0].Hist)
	assert.Equal(t, 1.7672256e+09, p[0].Created)
}

func TestBrokenHistograms(t *testing.T) {
	tests := map[string]string{
		"bucket below previous": `h_bucket{le="1"} 5
h_bucket{le="2"} 3
h_bucket{le="+Inf"} 5
h_count 5
`,
		"+Inf disagrees with count": `h_bucket{le="1"} 5
h_bucket{le="+Inf"} 6
h_count 5
`,
		"count below last bucket": `h_bucket{le="1"} 5
h_count 4
`,
		"neither +Inf nor count": `h_bucket{le="1"} 5
h_sum 1
`,
		"duplicate bound": `h_bucket{le="1"} 5
h_bucket{le="1.0"} 5
h_count 5
`,
		"bad le": `h_bucket{le="one"} 5
h_count 5
`,
		"bad le among good buckets": `h_bucket{le="0.5"} 1
h_bucket{le="one"} 3
h_bucket{le="+Inf"} 5
h_sum 2
h_count 5
`,
		"no le": `h_bucket 5
h_count 5
`,
		"infinite sum": `h_bucket{le="+Inf"} 5
h_sum +Inf
`,
		"negative bucket": `h_bucket{le="1"} -1
h_bucket{le="+Inf"} 5
`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			text := strings.ReplaceAll(body, "h_", "vllm:time_to_first_token_seconds_") +
				"vllm:num_requests_running 1\n"
			r := Normalize(VLLM, parse(t, text), "m")
			assert.Empty(t, find(t, r, accelschema.MetricTimeToFirstToken, ""))
			assert.Len(t, find(t, r, accelschema.MetricRequestsRunning, ""), 1, "other series kept")
			require.NotEmpty(t, r.Errors)
			assert.Contains(t, r.Errors[0].Error(), "gen_ai.server.time_to_first_token")
		})
	}
}

func TestBadCountersAndGauges(t *testing.T) {
	r := Normalize(VLLM, parse(t, `vllm:prompt_tokens_total{model_name="m"} -5
vllm:generation_tokens_total{model_name="m"} NaN
vllm:num_requests_running{model_name="m"} +Inf
vllm:num_requests_waiting{model_name="m"} 2
`), "")
	assert.Len(t, r.Points, 1)
	assert.Equal(t, 3, r.ErrorCount)
	assert.Contains(t, r.Errors[0].Error(), `gen_ai.server.tokens for model "m" (from line 1) dropped: counter value -5 is not a finite non-negative number`)
}

func TestModelFallback(t *testing.T) {
	r := Normalize(TGI, parse(t, "tgi_queue_size 2\n"), "zephyr")
	assert.Equal(t, "zephyr", r.Points[0].Model)
	r = Normalize(VLLM, parse(t, `vllm:num_requests_running{model_name=""} 2`+"\n"), "fallback")
	assert.Equal(t, "fallback", r.Points[0].Model)
	r = Normalize(VLLM, parse(t, `vllm:num_requests_running 2`+"\n"), "")
	assert.Equal(t, "", r.Points[0].Model)
}

func TestIgnoredFamilies(t *testing.T) {
	r := Normalize(VLLM, parse(t, `python_gc_objects_collected_total{generation="0"} 1
process_cpu_seconds_total 3
http_requests_total{handler="/v1/chat/completions"} 9
vllm:cache_config_info{block_size="16",engine="0"} 1
vllm:iteration_tokens_total_bucket{le="+Inf",model_name="m"} 3
`), "")
	assert.Zero(t, r.Matched)
	assert.Empty(t, r.Points)
}

func TestUnknownKind(t *testing.T) {
	r := Normalize("ollama", nil, "")
	require.Len(t, r.Errors, 1)
	assert.EqualError(t, r.Errors[0], `unknown server kind "ollama"`)
}

// Every output of every table is a registered schema metric with the shape
// the schema gives it.
func TestTablesMatchSchema(t *testing.T) {
	kinds := map[Kind]accelschema.Instrument{KindGauge: accelschema.Gauge, KindCounter: accelschema.Counter, KindHistogram: accelschema.Histogram}
	for _, s := range servers {
		for _, d := range s.dialects {
			for _, f := range d.families {
				def, ok := accelschema.LookupMetric(f.out.metric)
				require.True(t, ok, f.out.metric)
				assert.Equal(t, kinds[f.out.kind], def.Instrument, "%s %s", s.kind, f.name)
				if f.out.attrKey != "" {
					assert.Contains(t, def.Attributes, f.out.attrKey)
				}
				if f.out.attrKey == accelschema.AttrTokenType {
					assert.True(t, accelschema.EnumTokenType.Has(f.out.attrValue))
				}
			}
		}
	}
}

// FuzzNormalize feeds arbitrary exposition text to every server kind's
// normalizer and checks the points are well-formed.
func FuzzNormalize(f *testing.F) {
	for _, name := range []string{"vllm_v1.txt", "sglang.txt", "sglang_legacy.txt", "triton.txt", "tgi.txt", "nim.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		// Seed with a slice of each fixture: whole ones are slow to mutate.
		f.Add(string(b[:min(len(b), 4096)]))
	}
	f.Add("vllm:time_to_first_token_seconds_bucket{le=\"1\"} 2\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} 3\nvllm:time_to_first_token_seconds_count 3\n")
	f.Add("nv_inference_first_response_histogram_ms_bucket{model=\"m\",le=\"100\"} 1\nnv_inference_first_response_histogram_ms_count{model=\"m\"} 1\n")
	f.Fuzz(func(t *testing.T, text string) {
		samples := promscrape.Parse(text).Samples
		for _, kind := range Kinds {
			r := Normalize(kind, samples, "default")
			if r.ErrorCount < len(r.Errors) || len(r.Errors) > MaxErrors {
				t.Fatalf("%s: error accounting %d/%d", kind, len(r.Errors), r.ErrorCount)
			}
			for _, p := range r.Points {
				checkPoint(t, kind, p)
			}
		}
	})
}

func checkPoint(t *testing.T, kind string, p Point) {
	t.Helper()
	if _, ok := accelschema.LookupMetric(p.Metric); !ok {
		t.Fatalf("%s: unregistered metric %q", kind, p.Metric)
	}
	switch p.Kind {
	case KindGauge:
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			t.Fatalf("%s: gauge %s = %v", kind, p.Metric, p.Value)
		}
	case KindCounter:
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) || p.Value < 0 {
			t.Fatalf("%s: counter %s = %v", kind, p.Metric, p.Value)
		}
	case KindHistogram:
		h := p.Hist
		if len(h.Counts) != len(h.Bounds)+1 {
			t.Fatalf("%s: %s has %d counts for %d bounds", kind, p.Metric, len(h.Counts), len(h.Bounds))
		}
		var total uint64
		for _, c := range h.Counts {
			total += c
		}
		if total != h.Count {
			t.Fatalf("%s: %s buckets hold %d, count says %d", kind, p.Metric, total, h.Count)
		}
		for i, b := range h.Bounds {
			if math.IsNaN(b) || math.IsInf(b, 0) || (i > 0 && b <= h.Bounds[i-1]) {
				t.Fatalf("%s: %s bounds %v", kind, p.Metric, h.Bounds)
			}
		}
		if math.IsNaN(h.Sum) || math.IsInf(h.Sum, 0) {
			t.Fatalf("%s: %s sum %v", kind, p.Metric, h.Sum)
		}
	}
}
