package promscrape

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/confighttp"
)

// omPage has exemplars as prometheus_client writes them (labels sorted,
// floats as Python prints them, the timestamp as str(time.time())) and
// the forms the grammar allows beside: no timestamp, escapes, blanks, a
// sample timestamp before the exemplar.
const omPage = `# HELP rpc_seconds RPC latency.
# TYPE rpc_seconds histogram
rpc_seconds_bucket{le="0.1"} 1.0 # {span_id="00f067aa0ba902b7",trace_id="4bf92f3577b34da6a3ce929d0e0e4736"} 0.043 1767225686.167
rpc_seconds_bucket{le="+Inf"} 2.0 # {trace_id="a\"b\\c"} 7
rpc_seconds_count 2.0
rpc_seconds_sum 7.043
# TYPE requests counter
requests_total{code="200"} 3 1767225686.5 #	{ id = "é" , }   1.0e0   1767225686
requests_created{code="200"} 1.7672256e+09
# EOF
`

func TestParseOpenMetricsExemplars(t *testing.T) {
	pg := ParseOptions{OpenMetrics: true}.Parse(omPage)
	require.Zero(t, pg.Errors.Count, "%v", pg.Errors.First)
	require.Zero(t, pg.ExemplarErrors.Count, "%v", pg.ExemplarErrors.First)
	require.Len(t, pg.Samples, 6)
	require.Len(t, pg.Exemplars, 3)

	ex, ok := pg.Exemplar(0)
	require.True(t, ok)
	assert.Equal(t, []Label[string]{{"span_id", "00f067aa0ba902b7"}, {"trace_id", "4bf92f3577b34da6a3ce929d0e0e4736"}}, ex.Labels)
	assert.Equal(t, 0.043, ex.Value)
	assert.True(t, ex.HasTimestamp)
	assert.Equal(t, int64(1767225686167), ex.Timestamp)
	assert.Equal(t, []Label[string]{{"le", "0.1"}}, pg.Samples[0].Labels, "the exemplar's labels are not the sample's")
	assert.Equal(t, 1.0, pg.Samples[0].Value)

	ex, ok = pg.Exemplar(1)
	require.True(t, ok)
	id, _ := ex.Label("trace_id")
	assert.Equal(t, `a"b\c`, id, "escapes undone")
	assert.Equal(t, 7.0, ex.Value)
	assert.False(t, ex.HasTimestamp)

	_, ok = pg.Exemplar(2)
	assert.False(t, ok, "_count has none")

	ex, ok = pg.Exemplar(4)
	require.True(t, ok)
	assert.Equal(t, "requests_total", pg.Samples[4].Name)
	assert.True(t, pg.Samples[4].HasTimestamp)
	assert.Equal(t, int64(1767225686500), pg.Samples[4].Timestamp)
	assert.Equal(t, []Label[string]{{"id", "é"}}, ex.Labels)
	assert.Equal(t, 1.0, ex.Value)
	assert.Equal(t, int64(1767225686000), ex.Timestamp, "OpenMetrics timestamps are seconds, with or without a fraction")

	whole := ParseOptions{OpenMetrics: true}.Parse("a 1 1767225686\n")
	assert.Equal(t, int64(1767225686000), whole.Samples[0].Timestamp, "seconds on an OpenMetrics page")
	assert.Equal(t, int64(1767225686), Parse("a 1 1767225686\n").Samples[0].Timestamp, "milliseconds in format 0.0.4")

	text := Parse(omPage)
	require.Len(t, text.Samples, 6, "read as format 0.0.4, the same samples")
	assert.Empty(t, text.Exemplars, "and no exemplars")
	for i := range text.Samples {
		assert.False(t, text.Samples[i].HasExemplar)
		want := pg.Samples[i]
		want.HasExemplar = false
		if i == 4 {
			// 0.0.4 reads 1767225686.5 as seconds too; without a
			// fraction it would read milliseconds (below).
			assert.Equal(t, want.Timestamp, text.Samples[i].Timestamp)
		}
		assert.Equal(t, want, text.Samples[i])
	}
}

// A bad exemplar costs itself, never its sample: the sample is kept and the
// exemplar reported with the line and column where reading stopped.
func TestParseBadExemplars(t *testing.T) {
	long := strings.Repeat("é", MaxExemplarRunes-len("trace_id"))
	tests := []struct {
		line string
		err  error
		col  int
	}{
		{`a_bucket{le="1"} 1 # trace_id="x" 1`, ErrExemplarLabels, 22},
		{`a_bucket{le="1"} 1 #`, ErrExemplarLabels, 21},
		{`a_bucket{le="1"} 1 # {trace_id="x" 1`, ErrLabelSeparator, 36},
		{`a_bucket{le="1"} 1 # {trace_id="x}`, ErrLabelValueOpen, 35},
		{`a_bucket{le="1"} 1 # {"name"} 1`, ErrExemplarName, 22},
		{`a_bucket{le="1"} 1 # {trace_id="x"}`, ErrExemplarValue, 36},
		{`a_bucket{le="1"} 1 # {trace_id="x"} one`, ErrExemplarValue, 37},
		{`a_bucket{le="1"} 1 # {trace_id="x"} 1 later`, ErrExemplarTime, 39},
		{`a_bucket{le="1"} 1 # {trace_id="x"} 1 2 3`, ErrExemplarTrailing, 41},
		{`a_bucket{le="1"} 1 # {trace_id="` + long + `é"} 1`, ErrExemplarTooLong, 22},
		{`g 1 # {trace_id="x"} 1`, ErrExemplarPlace, 5},
		{`a_count 1 # {trace_id="x"} 1`, ErrExemplarPlace, 11},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			page := "# TYPE a histogram\n# TYPE g gauge\n" + tt.line + "\n"
			pg := ParseOptions{OpenMetrics: true}.Parse(page)
			require.Zero(t, pg.Errors.Count, "%v", pg.Errors.First)
			require.Len(t, pg.Samples, 1, "the sample is kept")
			assert.Equal(t, 1.0, pg.Samples[0].Value)
			assert.False(t, pg.Samples[0].HasExemplar)
			assert.Empty(t, pg.Exemplars)
			require.Equal(t, 1, pg.ExemplarErrors.Count)
			le := pg.ExemplarErrors.First[0]
			assert.ErrorIs(t, le, tt.err)
			assert.Equal(t, 3, le.Line)
			assert.Equal(t, tt.col, le.Column)
			assert.Equal(t, excerpt(tt.line), le.Text)
			assert.Len(t, pg.Samples[0].Labels, len(pg.Samples[0].Labels), "no exemplar label leaks into the sample")

			r := NewReader(strings.NewReader(page))
			r.OpenMetrics = true
			for en := r.Next(); en != EntryEnd; en = r.Next() {
				if en != EntrySample {
					continue
				}
				_, ok := r.Exemplar()
				assert.False(t, ok)
				got, ok := r.ExemplarError()
				require.True(t, ok)
				assert.Equal(t, le, got)
			}
		})
	}

	ok := ParseOptions{OpenMetrics: true}.Parse("a_bucket{le=\"1\"} 1 # {trace_id=\"" + long + "\"} 1\n")
	assert.Len(t, ok.Exemplars, 1, "exactly 128 characters is allowed")
}

func TestReaderExemplars(t *testing.T) {
	r := NewReader(strings.NewReader(omPage))
	r.OpenMetrics = true
	var ids []string
	for en := r.Next(); en != EntryEnd; en = r.Next() {
		require.NotEqual(t, EntryInvalid, en)
		if en != EntrySample {
			continue
		}
		_, bad := r.ExemplarError()
		require.False(t, bad)
		if ex, ok := r.Exemplar(); ok {
			ids = append(ids, string(ex.Labels[len(ex.Labels)-1].Value))
		}
	}
	assert.Equal(t, []string{"4bf92f3577b34da6a3ce929d0e0e4736", `a"b\c`, "é"}, ids)

	r.Reset(strings.NewReader(omPage))
	r.OpenMetrics = false
	for en := r.Next(); en != EntryEnd; en = r.Next() {
		if en == EntrySample {
			_, ok := r.Exemplar()
			assert.False(t, ok, "not read unless OpenMetrics")
		}
	}
}

// The vLLM page prometheus_client serves as OpenMetrics (constructed with
// exemplars on its latency buckets, receiver/inferencereceiver/testdata/gen)
// reads whole, each exemplar with a 32-digit trace id.
func TestParsePrometheusClientOpenMetricsPage(t *testing.T) {
	text := readPage(t, "vllm_v1_openmetrics.txt")
	pg := ParseOptions{OpenMetrics: true}.Parse(text)
	require.Zero(t, pg.Errors.Count, "%v", pg.Errors.First)
	require.Zero(t, pg.ExemplarErrors.Count, "%v", pg.ExemplarErrors.First)
	assert.Equal(t, strings.Count(text, " # {"), len(pg.Exemplars))
	for _, e := range pg.Exemplars {
		s := pg.Samples[e.Sample]
		assert.Equal(t, PartBucket, s.Part, s.Name)
		id, ok := e.Label("trace_id")
		assert.True(t, ok)
		assert.Len(t, id, 32)
		assert.True(t, e.HasTimestamp)
	}
}

func TestIsOpenMetrics(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/openmetrics-text; version=1.0.0; charset=utf-8": true,
		"application/openmetrics-text":                               true,
		" Application/OpenMetrics-Text;version=0.0.1":                true,
		"text/plain; version=0.0.4; charset=utf-8":                   false,
		"application/openmetrics-textual":                            false,
		"":                                                           false,
	} {
		assert.Equal(t, want, IsOpenMetrics(ct), ct)
	}
}

func TestFetchContentType(t *testing.T) {
	var accept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept = r.Header.Get("Accept")
		w.Header().Set("Content-Type", "application/openmetrics-text; version=1.0.0; charset=utf-8")
		_, _ = io.WriteString(w, "a_total 1 # {trace_id=\"1\"} 1\n# EOF\n")
	}))
	defer srv.Close()
	c := newTestClient(t, confighttp.NewDefaultClientConfig(), ClientOptions{Accept: AcceptOpenMetricsOrText})
	resp, _, err := c.FetchReusing(context.Background(), srv.URL, nil)
	require.NoError(t, err)
	assert.True(t, resp.OpenMetrics())
	assert.Equal(t, AcceptOpenMetricsOrText, accept)
	pg := ParseOptions{OpenMetrics: resp.OpenMetrics()}.Parse(resp.Text)
	assert.Len(t, pg.Exemplars, 1)

	srv.Close()
	_, _, err = c.FetchReusing(context.Background(), srv.URL, nil)
	require.Error(t, err)
	assert.False(t, errors.Is(err, io.EOF))
}

// ParseInto reads a page as Parse does, whatever the page held before,
// and allocates nothing once its arrays are large enough.
func TestParseInto(t *testing.T) {
	var pg Page
	for _, text := range []string{omPage, readPage(t, "vllm_v1_openmetrics.txt"), "a 1\nbroken{\n", omPage} {
		for _, om := range []bool{true, false} {
			o := ParseOptions{OpenMetrics: om}
			o.ParseInto(&pg, text)
			assert.Equal(t, withoutReuse(o.Parse(text)), withoutReuse(pg))
			o.ParseInto(&pg, text)
		}
	}
	text := readPage(t, "vllm_v1_openmetrics.txt")
	o := ParseOptions{OpenMetrics: true}
	o.ParseInto(&pg, text)
	assert.Zero(t, testing.AllocsPerRun(10, func() { o.ParseInto(&pg, text) }))
}

// A line error's text outlives the page it quotes (a scraper reads the next
// page into the same buffer), and a page with fewer errors than the one
// before leaves none of the old ones reachable through the reused arrays.
func TestParseIntoErrorsOutliveTheText(t *testing.T) {
	page := "# TYPE c counter\nc_total 1 # no-brace\nbroken{\nc_total 2\n"
	buf := []byte(page)
	text := unsafe.String(unsafe.SliceData(buf), len(buf))
	o := ParseOptions{OpenMetrics: true}
	var pg Page
	o.ParseInto(&pg, text)
	require.Len(t, pg.Errors.First, 1)
	require.Len(t, pg.ExemplarErrors.First, 1)
	for i := range buf {
		buf[i] = 'x' // the next scrape's page in the same buffer
	}
	assert.Equal(t, "broken{", pg.Errors.First[0].Text)
	assert.Equal(t, "c_total 1 # no-brace", pg.ExemplarErrors.First[0].Text)

	o.ParseInto(&pg, "c_total 3\n")
	assert.Empty(t, pg.Errors.First)
	assert.Empty(t, pg.ExemplarErrors.First)
	assert.Zero(t, pg.Errors.First[:1][0], "the old error is cleared from the array")
	assert.Zero(t, pg.ExemplarErrors.First[:1][0])
}

// withoutReuse is the page with its reuse state left out and empty slices
// as nil.
func withoutReuse(pg Page) Page {
	pg.labels, pg.types = nil, nil
	if len(pg.Errors.First) == 0 {
		pg.Errors.First = nil
	}
	if len(pg.ExemplarErrors.First) == 0 {
		pg.ExemplarErrors.First = nil
	}
	if len(pg.Exemplars) == 0 {
		pg.Exemplars = nil
	}
	return pg
}
