package inference

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

// Python's repr and prometheus_client's floatToGoString, checked against
// what CPython 3 prints for the same values.
func TestPyFloat(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0.0"}, {1, "1.0"}, {0.1, "0.1"}, {0.075, "0.075"}, {0.07500000000000001, "0.07500000000000001"},
		{123, "123.0"}, {999999, "999999.0"}, {1e6, "1e+06"}, {1234567, "1.234567e+06"},
		{8128902, "8.128902e+06"}, {1712345678.9012346, "1.7123456789012346e+09"},
		{12345678901, "1.2345678901e+010"}, // the library's own quirk past ten digits
		{1e-5, "1e-05"}, {0.0001, "0.0001"}, {2.5e-7, "2.5e-07"}, {1e16, "1e+16"}, {1.5e16, "1.5e+16"},
		{-1234567, "-1234567.0"}, {math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"}, {math.NaN(), "NaN"},
		{0.30000000000000004, "0.30000000000000004"}, {2560, "2560.0"},
	}
	for _, c := range cases {
		if got := string(pyFloat(nil, c.in)); got != c.want {
			t.Errorf("pyFloat(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func parse(t testing.TB, text []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("expfmt rejects the page: %v\n%s", err, text)
	}
	return fams
}

func handlerFor(t testing.TB, f *fleet.Fleet, pod string, tl sim.Timeline) *Handler {
	t.Helper()
	for _, p := range f.Pods {
		if p.Name == pod {
			return NewHandler(sim.NewWorld(f), p.Inference, tl, time.Unix(1_800_000_000, 500_000_000))
		}
	}
	t.Fatalf("no pod %s", pod)
	return nil
}

func checkHistogram(t *testing.T, fam *dto.MetricFamily, bounds []float64) {
	t.Helper()
	if fam.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("%s is %v", fam.GetName(), fam.GetType())
	}
	h := fam.GetMetric()[0].GetHistogram()
	buckets := h.GetBucket()
	if len(buckets) != len(bounds)+1 || !math.IsInf(buckets[len(bounds)].GetUpperBound(), 1) || buckets[len(bounds)].GetCumulativeCount() != h.GetSampleCount() {
		t.Fatalf("%s: %d buckets, want %d and +Inf = count", fam.GetName(), len(buckets), len(bounds))
	}
	prev := uint64(0)
	for i, b := range buckets[:len(bounds)] {
		if b.GetUpperBound() != bounds[i] || b.GetCumulativeCount() < prev || b.GetCumulativeCount() > h.GetSampleCount() {
			t.Fatalf("%s bucket %d: le %v count %d (count %d)", fam.GetName(), i, b.GetUpperBound(), b.GetCumulativeCount(), h.GetSampleCount())
		}
		prev = b.GetCumulativeCount()
	}
	if h.GetSampleCount() == 0 || h.GetSampleSum() <= 0 {
		t.Errorf("%s is empty after 20 minutes of traffic", fam.GetName())
	}
}

func TestVLLMPage(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	h := handlerFor(t, f, "vllm-llama-6b9f7d4c8-k2x7p", sim.Timeline{})
	text := h.Metrics(nil, 20*60)
	fams := parse(t, text)
	for name, typ := range map[string]dto.MetricType{
		"vllm:num_requests_running": dto.MetricType_GAUGE, "vllm:num_requests_waiting": dto.MetricType_GAUGE,
		"vllm:kv_cache_usage_perc": dto.MetricType_GAUGE, "vllm:prompt_tokens_total": dto.MetricType_COUNTER,
		"vllm:generation_tokens_total": dto.MetricType_COUNTER, "vllm:request_success_total": dto.MetricType_COUNTER,
		"vllm:prefix_cache_queries_total": dto.MetricType_COUNTER, "vllm:prefix_cache_hits_total": dto.MetricType_COUNTER,
		"vllm:prompt_tokens_created": dto.MetricType_GAUGE, "vllm:time_to_first_token_seconds_created": dto.MetricType_GAUGE,
	} {
		fam := fams[name]
		if fam == nil || fam.GetType() != typ {
			t.Errorf("%s: %v", name, fam.GetType())
			continue
		}
		for _, m := range fam.GetMetric() {
			var engine, model string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "engine":
					engine = l.GetValue()
				case "model_name":
					model = l.GetValue()
				}
			}
			if engine != "0" || model != "meta-llama/Llama-3.1-8B-Instruct" {
				t.Errorf("%s labels: %v", name, m.GetLabel())
			}
		}
	}
	checkHistogram(t, fams["vllm:time_to_first_token_seconds"], sim.VLLMTTFTBuckets)
	checkHistogram(t, fams["vllm:inter_token_latency_seconds"], sim.VLLMTokenBuckets)
	checkHistogram(t, fams["vllm:request_time_per_output_token_seconds"], sim.VLLMTokenBuckets)
	checkHistogram(t, fams["vllm:e2e_request_latency_seconds"], sim.VLLMRequestBuckets)
	checkHistogram(t, fams["vllm:request_queue_time_seconds"], sim.VLLMRequestBuckets)
	if got := len(fams["vllm:request_success_total"].GetMetric()); got != 4 {
		t.Errorf("finished reasons: %d", got)
	}
	if v := fams["vllm:prompt_tokens_created"].GetMetric()[0].GetGauge().GetValue(); v != 1_800_000_000.5 {
		t.Errorf("_created = %v", v)
	}
	// prometheus_client's text: sorted labels, Python floats, _created families.
	for _, want := range []string{
		`vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="meta-llama/Llama-3.1-8B-Instruct"} `,
		`vllm:time_to_first_token_seconds_bucket{engine="0",le="2560.0",model_name=`,
		`vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name=`,
		"# TYPE vllm:prompt_tokens_created gauge\n",
		`vllm:prompt_tokens_created{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.8000000005e+09`,
		`vllm:request_success_total{engine="0",finished_reason="stop",model_name=`,
	} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestSGLangPage(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	h := handlerFor(t, f, "sglang-qwen-0", sim.Timeline{})
	text := h.Metrics(nil, 20*60)
	fams := parse(t, text)
	for _, name := range []string{"sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage", "sglang:gen_throughput", "sglang:cache_hit_rate", "sglang:max_total_num_tokens"} {
		fam := fams[name]
		if fam == nil || len(fam.GetMetric()[0].GetLabel()) != 2 || fam.GetMetric()[0].GetLabel()[1].GetName() != "tp_rank" {
			t.Errorf("%s: %v", name, fam)
		}
	}
	for _, name := range []string{"sglang:prompt_tokens_total", "sglang:generation_tokens_total"} {
		if fams[name].GetType() != dto.MetricType_COUNTER || fams[name].GetMetric()[0].GetCounter().GetValue() <= 0 {
			t.Errorf("%s: %v", name, fams[name])
		}
	}
	checkHistogram(t, fams["sglang:time_to_first_token_seconds"], sim.SGLangTTFTBuckets)
	checkHistogram(t, fams["sglang:inter_token_latency_seconds"], sim.SGLangITLBuckets)
	checkHistogram(t, fams["sglang:e2e_request_latency_seconds"], sim.SGLangE2EBuckets)
	if bytes.Contains(text, []byte("_created")) {
		t.Error("SGLang runs in multiprocess mode: no _created samples")
	}
	sum := bytes.Index(text, []byte("sglang:time_to_first_token_seconds_sum"))
	bucket := bytes.Index(text, []byte("sglang:time_to_first_token_seconds_bucket"))
	if sum < 0 || bucket < sum {
		t.Error("multiprocess histograms start with _sum")
	}
}

// When the GPU under a vLLM server falls off the bus the engine dies:
// /health answers 500, counters freeze and requests pile up.
func TestServerAfterItsGPUDies(t *testing.T) {
	f := simtest.Fleet(t, `nodes:
  - name: a
    instance_type: p5.4xlarge
    failures: [{gpu: 0, at: 2m, xid: 79}]
pods:
  - name: llm
    node: a
    workload: {profile: inference-steady}
    inference: {server: vllm}
    containers: [{name: c, gpus: [0]}]
`, 1)
	clock := &sim.FixedClock{T: time.Unix(1_800_000_000, 0)}
	tl := sim.Timeline{Start: clock.T, Speed: 60, Clock: clock}
	srv := httptest.NewServer(handlerFor(t, f, "llm", tl))
	defer srv.Close()
	get := func(path string) (int, []byte) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	gauge := func(body []byte, name string) float64 {
		m := parse(t, body)[name].GetMetric()[0]
		if m.GetCounter() != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	clock.T = clock.T.Add(time.Second) // 1 simulated minute
	if code, _ := get("/health"); code != 200 {
		t.Fatalf("/health before the failure: %d", code)
	}
	_, before := get("/metrics")
	clock.T = clock.T.Add(3 * time.Second) // 4 simulated minutes
	code, body := get("/health")
	if code != 500 || !strings.Contains(string(body), "EngineDead") {
		t.Errorf("/health after the failure: %d %s", code, body)
	}
	_, after := get("/metrics")
	clock.T = clock.T.Add(3 * time.Second)
	_, later := get("/metrics")
	if gauge(after, "vllm:num_requests_running") != 0 || gauge(later, "vllm:num_requests_waiting") <= gauge(after, "vllm:num_requests_waiting") {
		t.Errorf("after the failure: running %v, waiting %v then %v", gauge(after, "vllm:num_requests_running"),
			gauge(after, "vllm:num_requests_waiting"), gauge(later, "vllm:num_requests_waiting"))
	}
	if gauge(later, "vllm:generation_tokens_total") != gauge(after, "vllm:generation_tokens_total") || gauge(after, "vllm:generation_tokens_total") <= gauge(before, "vllm:generation_tokens_total") {
		t.Error("generation tokens did not freeze at the failure")
	}
	if code, body := get("/v1/models"); code != 200 || !bytes.Contains(body, []byte(`"id":"meta-llama/Llama-3.1-8B-Instruct"`)) {
		t.Errorf("/v1/models: %d %s", code, body)
	}
}

func BenchmarkRenderVLLM(b *testing.B) {
	f := simtest.DemoFleet(b, 0)
	h := handlerFor(b, f, "vllm-llama-6b9f7d4c8-k2x7p", sim.Timeline{})
	buf := h.Metrics(nil, 0)
	points := 0
	for _, fam := range parse(b, h.Metrics(nil, 60)) {
		for _, m := range fam.GetMetric() {
			points++
			if m.GetHistogram() != nil {
				points += len(m.GetHistogram().GetBucket()) + 2
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	at := 60.0
	for i := 0; i < b.N; i++ {
		at += 10
		buf = h.Metrics(buf[:0], at)
	}
	b.ReportMetric(float64(points*b.N)/b.Elapsed().Seconds(), "points/s")
}
