package inference

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
)

// omExemplar is an exemplar as the test reads it.
type omExemplar struct {
	traceID, spanID string
	ts              int64 // ms
}

// openMetricsSeries checks the page with promscrape in OpenMetrics mode
// (no line or exemplar it cannot read, exemplars only where the format
// allows them, # EOF last) and returns its samples' values and exemplars by
// series as written.
func openMetricsSeries(t *testing.T, page []byte) (values map[string]float64, exemplars map[string]omExemplar) {
	t.Helper()
	pg := promscrape.ParseOptions{OpenMetrics: true}.Parse(string(page))
	if pg.Errors.Count > 0 || pg.ExemplarErrors.Count > 0 {
		t.Fatalf("not OpenMetrics: %v %v", pg.Errors.First, pg.ExemplarErrors.First)
	}
	if !strings.HasSuffix(string(page), "\n# EOF\n") {
		t.Fatal("no # EOF at the end")
	}
	values, exemplars = map[string]float64{}, map[string]omExemplar{}
	lines := strings.Split(string(page), "\n")
	for i, s := range pg.Samples {
		line := lines[s.Line-1]
		sample, _, _ := strings.Cut(line, " # ")
		series := sample[:strings.LastIndexByte(sample, ' ')]
		values[series] = s.Value
		if e, ok := pg.Exemplar(i); ok {
			trace, _ := e.Label("trace_id")
			span, _ := e.Label("span_id")
			exemplars[series] = omExemplar{traceID: trace, spanID: span, ts: e.Timestamp}
		}
	}
	return values, exemplars
}

// textSeries reads the text page's samples by series as written.
func textSeries(t *testing.T, page []byte) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(string(page), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out[line[:sp]] = v
	}
	return out
}

// The OpenMetrics page is the text page's samples in the other format,
// with exemplars on the latency buckets only and deterministic trace ids;
// a bucket keeps its exemplar until its count grows.
func TestOpenMetricsPage(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	for _, pod := range []string{"vllm-llama-6b9f7d4c8-k2x7p", "sglang-qwen-0"} {
		t.Run(pod, func(t *testing.T) {
			h := handlerFor(t, f, pod, sim.Timeline{})
			const now = 1_800_001_200.25
			om := h.OpenMetrics(nil, 20*60, now)
			values, exemplars := openMetricsSeries(t, om)
			text := h.Metrics(nil, 20*60)
			want := textSeries(t, text)
			if len(values) != len(want) {
				t.Fatalf("OpenMetrics has %d series, the text page %d", len(values), len(want))
			}
			for series, v := range want {
				if got, ok := values[series]; !ok || got != v {
					t.Errorf("%s: OpenMetrics %v (%v), text %v", series, got, ok, v)
				}
			}
			if len(exemplars) < 10 {
				t.Fatalf("%d exemplars", len(exemplars))
			}
			for series, e := range exemplars {
				if !strings.Contains(series, "_bucket{") || !latency(series) {
					t.Errorf("exemplar on %s", series)
				}
				if e.ts != int64(now*1000) || len(e.traceID) != 32 || len(e.spanID) != 16 {
					t.Errorf("%s: exemplar %v", series, e)
				}
			}

			// Same pod, same counts: same trace ids, however often read.
			again := handlerFor(t, f, pod, sim.Timeline{})
			_, same := openMetricsSeries(t, again.OpenMetrics(nil, 20*60, now))
			for series, e := range exemplars {
				if same[series].traceID != e.traceID {
					t.Errorf("%s: trace id %s, then %s", series, e.traceID, same[series].traceID)
				}
			}

			// Later: the buckets whose count grew have new exemplars, the
			// others their old ones, timestamps and all.
			_, later := openMetricsSeries(t, h.OpenMetrics(nil, 25*60, now+300))
			var grew, kept int
			for series, e := range later {
				old, had := exemplars[series]
				switch {
				case had && old.traceID == e.traceID:
					if old.ts != e.ts {
						t.Errorf("%s: kept exemplar re-stamped", series)
					}
					kept++
				default:
					if e.ts != int64((now+300)*1000) {
						t.Errorf("%s: new exemplar at %d", series, e.ts)
					}
					grew++
				}
			}
			t.Logf("%d exemplars; five minutes later %d new, %d kept", len(exemplars), grew, kept)
			if grew == 0 || kept == 0 {
				t.Errorf("after five minutes %d exemplars new, %d kept", grew, kept)
			}
		})
	}
}

func latency(series string) bool {
	for _, name := range []string{"time_to_first_token_seconds", "inter_token_latency_seconds", "request_time_per_output_token_seconds",
		"e2e_request_latency_seconds", "request_queue_time_seconds"} {
		if strings.Contains(series, ":"+name+"_bucket{") {
			return true
		}
	}
	return false
}

// ServeHTTP answers as prometheus_client does: OpenMetrics to any Accept
// naming it, the text format otherwise.
func TestServeNegotiatesOpenMetrics(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	h := handlerFor(t, f, "vllm-llama-6b9f7d4c8-k2x7p", sim.Timeline{Clock: &sim.FixedClock{}, Speed: 1})
	srv := httptest.NewServer(h)
	defer srv.Close()
	for accept, want := range map[string]string{
		promscrape.AcceptOpenMetricsOrText: OpenMetricsContentType,
		promscrape.AcceptTextOrOpenMetrics: OpenMetricsContentType,
		promscrape.AcceptText:              ContentType,
		"":                                 ContentType,
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", http.NoBody)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); got != want {
			t.Errorf("Accept %q: %s", accept, got)
		}
		if want == OpenMetricsContentType && !strings.HasSuffix(string(body), "# EOF\n") {
			t.Errorf("Accept %q: no # EOF", accept)
		}
	}
}
