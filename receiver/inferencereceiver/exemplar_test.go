package inferencereceiver

import (
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// openMetricsType is what prometheus_client answers an Accept naming
// OpenMetrics with.
const openMetricsType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

// The OpenMetrics fixtures are vllm_v1.txt and vllm_v1_later.txt as
// prometheus_client serves them to an OpenMetrics Accept, constructed with
// exemplars on the latency buckets (testdata/gen, vllm_v1_openmetrics):
// the same requests, the same values.
const (
	omFixture      = "vllm_v1_openmetrics.txt"
	omLaterFixture = "vllm_v1_later_openmetrics.txt"
)

// TestOpenMetricsExemplars: the receiver asks for OpenMetrics, reads the
// exemplars of an OpenMetrics page onto the latency histograms' points, and
// otherwise emits exactly what the text page gives (vllm_v1.yaml); served
// as text, the same page gives no exemplars at all.
func TestOpenMetricsExemplars(t *testing.T) {
	srv := newFakeServer(t, readFixture(t, omFixture))
	srv.contentType = openMetricsType
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	md := h.scrape(t)
	assert.True(t, strings.HasPrefix(srv.accept, "application/openmetrics-text;version=1.0.0"), "OpenMetrics asked for first: %s", srv.accept)
	compareGolden(t, "vllm_v1_openmetrics", md)
	assert.Empty(t, h.logs.All(), "a clean scrape logs nothing")

	ids := exemplarIDs(t, md)
	assert.Equal(t, pageTraceIDs(t, readFixture(t, omFixture), nil), ids, "every exemplar of the page, once, on the first scrape")

	stripped := pmetric.NewMetrics()
	md.CopyTo(stripped)
	forHistograms(stripped, func(dp pmetric.HistogramDataPoint) {
		dp.Exemplars().RemoveIf(func(pmetric.Exemplar) bool { return true })
	})
	compareGolden(t, "vllm_v1", stripped)

	asText := newFakeServer(t, readFixture(t, omFixture))
	h = newHarness(t, configFor(TargetConfig{Endpoint: asText.URL, Server: normalize.VLLM}))
	md = h.scrape(t)
	compareGolden(t, "vllm_v1", md)
	assert.Empty(t, exemplarIDs(t, md), "exemplars are read only from a page served as OpenMetrics")
}

// TestOpenMetricsSameAsText: SGLang's page as prometheus_client serves it
// to an OpenMetrics Accept (counters declared without _total, no exemplars)
// gives exactly what its text page gives.
func TestOpenMetricsSameAsText(t *testing.T) {
	srv := newFakeServer(t, readFixture(t, "sglang_openmetrics.txt"))
	srv.contentType = openMetricsType
	for _, server := range []string{normalize.SGLang, ServerAuto} {
		h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: server}))
		compareGolden(t, "sglang", h.scrape(t))
		assert.Empty(t, h.logs.All())
	}
}

// TestExemplarsBelongToTheirInterval: a bucket's exemplar stays on the page
// until a newer observation replaces it; the receiver emits it with the
// interval it appeared in and not again.
func TestExemplarsBelongToTheirInterval(t *testing.T) {
	first, later := readFixture(t, omFixture), readFixture(t, omLaterFixture)
	srv := newFakeServer(t, first)
	srv.contentType = openMetricsType
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	h.scrape(t)

	srv.serve(200, later)
	h.clock.advance(15 * time.Second)
	md := h.scrape(t)
	want := pageTraceIDs(t, later, pageExemplars(first))
	require.NotEmpty(t, want, "the later page has new exemplars")
	require.Less(t, len(want), len(pageExemplars(later)), "and keeps some old ones")
	assert.Equal(t, want, exemplarIDs(t, md), "only the buckets whose exemplar changed")

	h.clock.advance(15 * time.Second)
	assert.Empty(t, exemplarIDs(t, h.scrape(t)), "an unchanged page repeats none")
}

// TestBadExemplars: an exemplar that cannot be read is dropped with a
// warning naming the target and the line, its bucket kept; a malformed
// trace_id leaves the exemplar without a trace, its text an attribute.
func TestBadExemplars(t *testing.T) {
	page := readFixture(t, omFixture)
	lines := strings.Split(page, "\n")
	var broken, badID int
	for i, l := range lines {
		if !strings.Contains(l, " # {") || !strings.HasPrefix(l, "vllm:e2e_request_latency_seconds_bucket") {
			continue
		}
		switch {
		case broken == 0:
			lines[i] = l[:strings.Index(l, " # {")] + " # {trace_id=\"x\" 1"
			broken = i + 1
		case badID == 0:
			lines[i] = regexp.MustCompile(`trace_id="[0-9a-f]+"`).ReplaceAllString(l, `trace_id="not-hex"`)
			badID = i + 1
		}
	}
	require.NotZero(t, badID)
	srv := newFakeServer(t, strings.Join(lines, "\n"))
	srv.contentType = openMetricsType
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	md := h.scrape(t)

	got := flatten(md).histogram(t, "gen_ai.server.request.duration")
	assert.Equal(t, uint64(412), got.Count(), "the buckets are all there")
	logs := h.logs.FilterMessage("Skipped unreadable input from an inference server; the rest of its metrics were kept").All()
	require.Len(t, logs, 1)
	details := logs[0].ContextMap()["details"].(string)
	assert.Contains(t, details, "exemplar dropped, sample kept: line "+strconv.Itoa(broken))
	assert.Contains(t, details, `trace_id "not-hex" is not 32 hexadecimal digits`)
	assert.Contains(t, details, "(line "+strconv.Itoa(badID)+")")
	assert.Equal(t, srv.URL+"/metrics", logs[0].ContextMap()["target"])

	var kept int
	for i := 0; i < got.Exemplars().Len(); i++ {
		e := got.Exemplars().At(i)
		if v, ok := e.FilteredAttributes().Get("trace_id"); ok {
			assert.Equal(t, "not-hex", v.Str())
			assert.True(t, e.TraceID().IsEmpty())
			assert.False(t, e.SpanID().IsEmpty(), "its valid span_id is kept")
			kept++
		}
	}
	assert.Equal(t, 1, kept)
	assert.Equal(t, len(pageExemplarsOf(page, "vllm:e2e_request_latency_seconds_bucket"))-1, got.Exemplars().Len())
}

// exemplarLine matches a bucket line with an exemplar as prometheus_client
// writes it; the series is group 1, the exemplar's labels group 2.
var exemplarLine = regexp.MustCompile(`^(vllm:[a-z0-9_]+_bucket\{[^}]*\}) \S+ # \{([^}]*)\} \S+ \S+$`)

// pageExemplars returns each series' exemplar text, read with a regular
// expression rather than the parser under test.
func pageExemplars(page string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(page, "\n") {
		if m := exemplarLine.FindStringSubmatch(l); m != nil {
			out[m[1]] = l[strings.Index(l, " # "):]
		}
	}
	return out
}

func pageExemplarsOf(page, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range pageExemplars(page) {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out
}

var traceIDLabel = regexp.MustCompile(`trace_id="([0-9a-f]{32})"`)

// pageTraceIDs counts the trace ids of the page's exemplars on the
// receiver's latency histograms, leaving out those of series whose
// exemplar is the same in before.
func pageTraceIDs(t *testing.T, page string, before map[string]string) map[string]int {
	t.Helper()
	latency := []string{"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
		"vllm:request_time_per_output_token_seconds", "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds"}
	out := map[string]int{}
	for series, ex := range pageExemplars(page) {
		if before[series] == ex {
			continue
		}
		for _, name := range latency {
			if strings.HasPrefix(series, name+"_bucket{") {
				m := traceIDLabel.FindStringSubmatch(ex)
				require.NotNil(t, m, ex)
				out[m[1]]++
			}
		}
	}
	return out
}

// exemplarIDs counts the trace ids of md's exemplars, checking each has a
// span, a time, and a value within its bucket.
func exemplarIDs(t *testing.T, md pmetric.Metrics) map[string]int {
	t.Helper()
	out := map[string]int{}
	forHistograms(md, func(dp pmetric.HistogramDataPoint) {
		for i := 0; i < dp.Exemplars().Len(); i++ {
			e := dp.Exemplars().At(i)
			require.False(t, e.TraceID().IsEmpty())
			require.False(t, e.SpanID().IsEmpty())
			require.Positive(t, e.Timestamp())
			require.Equal(t, pmetric.ExemplarValueTypeDouble, e.ValueType())
			require.GreaterOrEqual(t, e.DoubleValue(), 0.0, "a latency")
			id := e.TraceID()
			out[hex.EncodeToString(id[:])]++
		}
	})
	return out
}

func forHistograms(md pmetric.Metrics, f func(pmetric.HistogramDataPoint)) {
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Type() != pmetric.MetricTypeHistogram {
					continue
				}
				dps := ms.At(k).Histogram().DataPoints()
				for d := 0; d < dps.Len(); d++ {
					f(dps.At(d))
				}
			}
		}
	}
}

// An exemplar timestamp no OTLP timestamp can hold is replaced by the
// scrape's time.
func TestExemplarTimestampOutOfRange(t *testing.T) {
	page := "# TYPE vllm:e2e_request_latency_seconds histogram\n" +
		`vllm:e2e_request_latency_seconds_bucket{le="1.0",model_name="m"} 1.0 # {trace_id="4bf92f3577b34da6a3ce929d0e0e4736"} 0.5 1e15` + "\n" +
		`vllm:e2e_request_latency_seconds_bucket{le="+Inf",model_name="m"} 2.0 # {trace_id="4bf92f3577b34da6a3ce929d0e0e4737"} 2.5 -5` + "\n" +
		`vllm:e2e_request_latency_seconds_count{model_name="m"} 2.0` + "\n" +
		`vllm:e2e_request_latency_seconds_sum{model_name="m"} 3.0` + "\n" +
		// Started before the scrape: exemplars of a first scrape without
		// _created are not emitted (internal/cumulative/exemplars.go).
		`vllm:e2e_request_latency_seconds_created{model_name="m"} 1.7e9` + "\n# EOF\n"
	srv := newFakeServer(t, page)
	srv.contentType = openMetricsType
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	dp := flatten(h.scrape(t)).histogram(t, "gen_ai.server.request.duration")
	require.Equal(t, 2, dp.Exemplars().Len())
	for i := 0; i < 2; i++ {
		assert.Equal(t, dp.Timestamp(), dp.Exemplars().At(i).Timestamp())
	}
}

// The response buffer is reused by the next scrape: what a scrape emitted
// must hold none of it. The points of the first scrape are still the golden
// ones after a page of the same length has overwritten the buffer.
func TestEmittedMetricsOutliveTheBuffer(t *testing.T) {
	text := readFixture(t, omFixture)
	srv := newFakeServer(t, text)
	srv.contentType = openMetricsType
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	md := h.scrape(t)
	srv.serve(200, strings.Repeat("x", len(text)-1)+"\n")
	h.scrape(t)
	compareGolden(t, "vllm_v1_openmetrics", md)
}
