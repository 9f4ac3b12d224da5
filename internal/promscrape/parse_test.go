package promscrape

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSampleForms(t *testing.T) {
	pg := Parse(`# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 14.0

DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-a", Hostname="h"} 1410
tgi_queue_size 2
escaped{path="C:\\dir\\\"x\"\nnext",plain="a b",odd="\q"} 1e+09 1700000000000
spaced { a = "1" , b="2", } -Inf
	indented{z="1",a="2"} +Inf
{"vllm.utf8.name",engine="0"} NaN
{"quoted.label"="v", "name.last"} 7
{bare_name, a="1"} 8
om_counter_total{a="b"} 3 # {trace_id="abc"} 1.0 1700000000.1
om_seconds 4 1700000000.250
closed{a="b"}5
no_blank-1
windows_line 7` + "\r\n")
	require.Zero(t, pg.Errors.Count, "%v", pg.Errors.First)
	require.Len(t, pg.Samples, 14)
	assert.Equal(t, 17, pg.Lines)

	s := pg.Samples[0]
	assert.Equal(t, "vllm:num_requests_running", s.Name)
	assert.Equal(t, []Label[string]{{"engine", "0"}, {"model_name", "meta-llama/Llama-3.1-8B-Instruct"}}, s.Labels)
	assert.Equal(t, 14.0, s.Value)
	assert.Equal(t, 3, s.Line)
	assert.Equal(t, Gauge, s.Type)

	assert.Equal(t, []Label[string]{{"gpu", "0"}, {"UUID", "GPU-a"}, {"Hostname", "h"}}, pg.Samples[1].Labels, "2.x label sets, spaces after commas")
	assert.Equal(t, "tgi_queue_size", pg.Samples[2].Name)
	assert.Empty(t, pg.Samples[2].Labels)
	assert.Equal(t, Untyped, pg.Samples[2].Type)

	esc := pg.Samples[3]
	assert.Equal(t, []Label[string]{{"path", "C:\\dir\\\"x\"\nnext"}, {"plain", "a b"}, {"odd", `\q`}}, esc.Labels)
	assert.Equal(t, 1e9, esc.Value)
	assert.True(t, esc.HasTimestamp)
	assert.Equal(t, int64(1700000000000), esc.Timestamp)

	assert.Equal(t, []Label[string]{{"a", "1"}, {"b", "2"}}, pg.Samples[4].Labels)
	assert.True(t, math.IsInf(pg.Samples[4].Value, -1))
	assert.False(t, pg.Samples[4].HasTimestamp)
	v, ok := pg.Samples[5].Label("a")
	assert.True(t, ok, "labels in any order")
	assert.Equal(t, "2", v)
	_, ok = pg.Samples[5].Label("missing")
	assert.False(t, ok)
	assert.True(t, math.IsInf(pg.Samples[5].Value, 1))

	assert.Equal(t, "vllm.utf8.name", pg.Samples[6].Name)
	assert.Equal(t, []Label[string]{{"engine", "0"}}, pg.Samples[6].Labels)
	assert.True(t, math.IsNaN(pg.Samples[6].Value))
	assert.Equal(t, "name.last", pg.Samples[7].Name)
	assert.Equal(t, []Label[string]{{"quoted.label", "v"}}, pg.Samples[7].Labels)

	assert.Equal(t, "bare_name", pg.Samples[8].Name, "a bare name in the label set, as expfmt reads it")
	pg.Samples = append(pg.Samples[:8], pg.Samples[9:]...)
	assert.Equal(t, 3.0, pg.Samples[8].Value, "exemplar ignored")
	assert.Equal(t, int64(1700000000250), pg.Samples[9].Timestamp, "OpenMetrics seconds")
	assert.Equal(t, 5.0, pg.Samples[10].Value, "no blank needed after '}'")
	assert.Equal(t, "no_blank", pg.Samples[11].Name, "a signed value right after the name, as expfmt reads it")
	assert.Equal(t, -1.0, pg.Samples[11].Value)
	assert.Equal(t, "windows_line", pg.Samples[12].Name)
	assert.Equal(t, 7.0, pg.Samples[12].Value)
}

func TestBadLinesAreSkippedWithTheirPosition(t *testing.T) {
	tests := []struct {
		line   string
		err    error
		column int
	}{
		{`9starts_with_digit 1`, ErrNoName, 1},
		{`no_value`, ErrNoValue, 9},
		{`no_value{a="b"}`, ErrNoValue, 16},
		{`bad-name 1`, ErrValue, 4},
		{`bad_value{a="b"} fourteen`, ErrValue, 18},
		{`DCGM_FI_DEV_MEMORY_TEMP{gpu="1", uuid="GPU-2"} ERROR - FAILED TO CONVERT TO STRING`, ErrValue, 48},
		{`too_big 1e400`, ErrValue, 9},
		{`unclosed{a="b" 1`, ErrLabelSeparator, 16},
		{`unclosed{a="b",`, ErrLabelSetOpen, 16},
		{`open_value{a="b} 1`, ErrLabelValueOpen, 19},
		{`no_equals{a "b"} 1`, ErrLabelEquals, 13},
		{`unquoted{a=b} 1`, ErrLabelNotQuoted, 12},
		{`bad_label{1a="b"} 1`, ErrLabelName, 11},
		{`colon_label{a:b="c"} 1`, ErrLabelEquals, 14},
		{`ts_not_number 1 yesterday`, ErrTimestamp, 17},
		{`trailing 1 2 3`, ErrTrailing, 14},
		{`{} 1`, ErrNoName, 1},
		{`{"a","b"} 1`, ErrNamedTwice, 6},
		{`name{"other"} 1`, ErrNamedTwice, 6},
		{`name{other} 1`, ErrNamedTwice, 6},
		{`{a b} 1`, ErrLabelEquals, 4},
		{`{"unterminated 1`, errUnterminatedKey, 17},
		{`trailing_escape{a="b\`, ErrLabelValueOpen, 21},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			page := "# TYPE good_before counter\ngood_before 1\n" + tt.line + "\ngood_after 2\n"
			pg := Parse(page)
			require.Len(t, pg.Samples, 2, "the lines around a bad one are kept")
			assert.Equal(t, "good_after", pg.Samples[1].Name)
			require.Equal(t, 1, pg.Errors.Count)
			e := pg.Errors.First[0]
			assert.Equal(t, 3, e.Line)
			assert.ErrorIs(t, e, tt.err)
			assert.Equal(t, tt.column, e.Column, "column")
			assert.Equal(t, tt.line, e.Text)
			assert.Contains(t, e.Error(), "line 3, column ")

			// The streaming reader says the same.
			r := NewReader(strings.NewReader(page))
			var got []Entry
			for en := r.Next(); en != EntryEnd; en = r.Next() {
				got = append(got, en)
				if en == EntryInvalid {
					assert.Equal(t, e, r.Invalid())
					assert.Equal(t, tt.line, string(r.Raw()))
				}
			}
			assert.Equal(t, []Entry{EntryType, EntrySample, EntryInvalid, EntrySample}, got)
			assert.NoError(t, r.Err())
		})
	}
}

func TestFamilies(t *testing.T) {
	pg := Parse(`# HELP http_requests The requests served.
# TYPE http_requests counter
http_requests_total{code="200"} 1027
http_requests_created{code="200"} 1.7e9
# TYPE old_style_total counter
old_style_total 3
# TYPE latency_seconds histogram
latency_seconds_bucket{le="0.1"} 3
latency_seconds_bucket{le="+Inf"} 5
latency_seconds_sum 1.5
latency_seconds_count 5
# TYPE rpc summary
rpc{quantile="0.99"} 0.2
rpc_sum 9
rpc_count 40
# TYPE temp gauge
temp 40
temp_total 2
# TYPE build info
build_info{version="1"} 1
untyped_bucket{le="1"} 1
latency_seconds_bucket{le="1"} 4
# TYPE queue gaugehistogram
queue_gsum 3
# TYPE weird frobnicator
weird 1
`)
	require.Zero(t, pg.Errors.Count, "%v", pg.Errors.First)
	type fam struct {
		family string
		typ    MetricType
		part   Part
	}
	var got []fam
	for _, s := range pg.Samples {
		got = append(got, fam{s.Family(), s.Type, s.Part})
	}
	assert.Equal(t, []fam{
		{"http_requests", Counter, PartValue},
		{"http_requests", Counter, PartCreated},
		{"old_style_total", Counter, PartValue},
		{"latency_seconds", Histogram, PartBucket},
		{"latency_seconds", Histogram, PartBucket},
		{"latency_seconds", Histogram, PartSum},
		{"latency_seconds", Histogram, PartCount},
		{"rpc", Summary, PartValue},
		{"rpc", Summary, PartSum},
		{"rpc", Summary, PartCount},
		{"temp", Gauge, PartValue},
		{"temp_total", Untyped, PartValue}, // a gauge has no _total
		{"build", Info, PartValue},
		{"untyped_bucket", Untyped, PartValue},
		{"latency_seconds", Histogram, PartBucket}, // away from its TYPE line
		{"queue", GaugeHistogram, PartSum},
		{"weird", Untyped, PartValue},
	}, got)
}

func TestReaderHelpAndType(t *testing.T) {
	r := NewReader(strings.NewReader("# HELP DCGM_FI_DEV_POWER_VIOLATION Throttling duration due to power constraints (in us).\n" +
		"#TYPE DCGM_FI_DEV_POWER_VIOLATION   counter\n" +
		"# HELP escaped a \\\\ b\\nc\n" +
		"# just a comment\n# HELP\n# TYPE\n# EOF\n"))
	require.Equal(t, EntryHelp, r.Next())
	name, text := r.Help()
	assert.Equal(t, "DCGM_FI_DEV_POWER_VIOLATION", string(name))
	assert.Equal(t, "Throttling duration due to power constraints (in us).", string(text))
	require.Equal(t, EntryType, r.Next())
	name, typ := r.Type()
	assert.Equal(t, "DCGM_FI_DEV_POWER_VIOLATION", string(name))
	assert.Equal(t, Counter, typ)
	require.Equal(t, EntryHelp, r.Next())
	_, text = r.Help()
	assert.Equal(t, "a \\ b\nc", string(text))
	assert.Equal(t, EntryEnd, r.Next())
	assert.Equal(t, 7, r.Line())
	assert.NoError(t, r.Err())
}

func TestReaderLongLines(t *testing.T) {
	long := "long{a=\"" + strings.Repeat("x", 100<<10) + "\"} 1\n"
	fits := "fits{a=\"" + strings.Repeat("y", 40<<10) + "\"} 2\n"
	r := NewReader(strings.NewReader("first 1\n" + long + fits + "last 3"))
	var names []string
	for en := r.Next(); en != EntryEnd; en = r.Next() {
		switch en {
		case EntrySample:
			names = append(names, string(r.Sample().Name))
		case EntryInvalid:
			e := r.Invalid()
			assert.ErrorIs(t, e, ErrLineTooLong)
			assert.Equal(t, 2, e.Line)
			assert.Zero(t, e.Column)
			assert.Len(t, e.Text, maxExcerpt+len("…"))
		}
	}
	assert.Equal(t, []string{"first", "fits", "last"}, names)
	assert.Equal(t, 4, r.Line())
}

type cutReader struct {
	text string
	err  error
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.text == "" {
		return 0, c.err
	}
	n := copy(p, c.text)
	c.text = c.text[n:]
	return n, nil
}

// A page cut by a read error keeps the lines before the cut; the cut line
// is dropped, and Err says why.
func TestReaderCut(t *testing.T) {
	cut := &BodyTooLargeError{Limit: 1 << 20}
	r := NewReader(&cutReader{text: "a 1\nb 2\nc{x=\"hal", err: cut})
	var names []string
	for en := r.Next(); en != EntryEnd; en = r.Next() {
		require.Equal(t, EntrySample, en)
		names = append(names, string(r.Sample().Name))
	}
	assert.Equal(t, []string{"a", "b"}, names)
	assert.Equal(t, cut, r.Err())
	assert.Equal(t, 3, r.Line())
	assert.Equal(t, EntryEnd, r.Next(), "stays at the end")

	r.Reset(strings.NewReader("# TYPE d counter\nd_total 4\n"))
	require.NoError(t, r.Err())
	require.Equal(t, EntryType, r.Next())
	require.Equal(t, EntrySample, r.Next())
	assert.Equal(t, "d", string(r.Sample().Family()))
	assert.Equal(t, 2, r.Sample().Line)
}

// The reader's families are those of its own page.
func TestReaderResetForgetsFamilies(t *testing.T) {
	r := NewReader(strings.NewReader("# TYPE d counter\n"))
	require.Equal(t, EntryType, r.Next())
	r.Reset(strings.NewReader("d_total 4\n"))
	require.Equal(t, EntrySample, r.Next())
	assert.Equal(t, Untyped, r.Sample().Type)
	assert.Equal(t, "d_total", string(r.Sample().Family()))
}

func TestErrorsAreBounded(t *testing.T) {
	pg := Parse(strings.Repeat("garbage line\n", 1000) + "ok 1\n" + strings.Repeat("x", 500) + "{\n")
	assert.Len(t, pg.Samples, 1)
	assert.Equal(t, 1001, pg.Errors.Count)
	assert.Len(t, pg.Errors.First, MaxErrors)
	assert.Equal(t, 1001-MaxErrors, pg.Errors.Dropped())
	long := Parse(strings.Repeat("y", 500) + "{\n")
	require.Len(t, long.Errors.First, 1)
	assert.Len(t, long.Errors.First[0].Text, maxExcerpt+len("…"))
}

// Labels of one sample must not change when later samples are parsed
// (Parse keeps one array for them, and unescapes into a shared buffer).
func TestLabelsAreStable(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteString(`m{a="`)
		b.WriteString(strings.Repeat("v", i%7))
		b.WriteString(`",b="x\"` + strings.Repeat("w", i%5) + `"} 1` + "\n")
	}
	pg := Parse(b.String())
	require.Len(t, pg.Samples, 200)
	for i, s := range pg.Samples {
		require.Equal(t, []Label[string]{{"a", strings.Repeat("v", i%7)}, {"b", `x"` + strings.Repeat("w", i%5)}}, s.Labels, "sample %d", i)
	}
}

func TestExactDecimalIsParseFloat(t *testing.T) {
	cases := []string{"0", "-0", "+0", "1", "1980", "14.0", "0.8901827638996558", "1.7487796e+09",
		"1e22", "1e23", "1e-22", "9007199254740992", "9007199254740993", "123456789012345678",
		"1234567890123456789", "12345678901234567890", "0.1", ".5", "5.", "-.5e-3", "1E5",
		"00000000000000000000001", "1.00000000000000000000", "4.9e-324", "1.7976931348623157e308"}
	for _, c := range cases {
		want, werr := parseFloat(c)
		got, ok := parseValue(c)
		require.Equal(t, werr == nil, ok, c)
		require.Equal(t, math.Float64bits(want), math.Float64bits(got), c)
	}
	for _, c := range []string{"", ".", "-", "e5", "1e", "1e+", "1.2.3", "1x", "--1", "0x1p4"} {
		_, ok := exactDecimal(c)
		assert.False(t, ok, c)
	}
}

func TestTimestamps(t *testing.T) {
	for text, want := range map[string]int64{
		"1700000000000":  1700000000000,
		"-5":             -5,
		"1700000000.25":  1700000000250,
		"1.7e9":          1700000000000,
		"12345678901234": 12345678901234,
	} {
		got, ok := parseTimestamp(text)
		assert.True(t, ok, text)
		assert.Equal(t, want, got, text)
	}
	for _, text := range []string{"99999999999999999999", "NaN", "1e300", "x", "-"} {
		_, ok := parseTimestamp(text)
		assert.False(t, ok, text)
	}
}

// Scraping the same endpoint again costs the Reader no allocation: its
// buffers and the names of the page's families are kept.
func TestReaderAllocatesNothingOnTheNextPage(t *testing.T) {
	text := readPage(t, "dcgm-exporter-2.x.txt")
	src := strings.NewReader(text)
	r := NewReader(src)
	read := func() {
		src.Reset(text)
		r.Reset(src)
		for en := r.Next(); en != EntryEnd; en = r.Next() {
		}
	}
	read()
	assert.Zero(t, testing.AllocsPerRun(20, read))
}

func TestFamilyNamesKeptAreBounded(t *testing.T) {
	var b strings.Builder
	for i := range maxNames + 10 {
		b.WriteString("# TYPE f" + strconv.Itoa(i) + " counter\n")
	}
	r := NewReader(strings.NewReader(b.String()))
	for en := r.Next(); en != EntryEnd; en = r.Next() {
	}
	assert.LessOrEqual(t, len(r.p.families.names), maxNames)
	assert.Len(t, r.p.families.types, maxNames+10, "the page's own families are all kept")
}

func TestReaderLineErrorForTheCallersReason(t *testing.T) {
	r := NewReader(strings.NewReader("a 1\nb{x=\"y\"} 2\r\n"))
	require.Equal(t, EntrySample, r.Next())
	require.Equal(t, EntrySample, r.Next())
	unusable := errors.New("no uuid")
	e := r.LineError(unusable)
	assert.Equal(t, LineError{Line: 2, Err: unusable, Text: `b{x="y"} 2`}, e)
	assert.Equal(t, `line 2: no uuid: "b{x=\"y\"} 2"`, e.Error())
}

// prometheus_client prints a missing value as Python's None: with None
// among the absent values such a line is no error.
func TestAbsentValues(t *testing.T) {
	page := "a{x=\"1\"} None\nb None 123\nc 1\nd none\n"
	pg := ParseOptions{AbsentValues: []string{"None"}}.Parse(page)
	assert.Equal(t, 2, pg.Absent)
	require.Len(t, pg.Samples, 1)
	assert.Equal(t, "c", pg.Samples[0].Name)
	assert.Empty(t, pg.Samples[0].Labels)
	require.Equal(t, 1, pg.Errors.Count, "only the word as written")
	assert.ErrorIs(t, pg.Errors.First[0], ErrValue)
	assert.Equal(t, 3, Parse(page).Errors.Count, "without the option they are errors")

	r := NewReader(strings.NewReader(page))
	r.AbsentValues = []string{"None"}
	var got []Entry
	for en := r.Next(); en != EntryEnd; en = r.Next() {
		got = append(got, en)
	}
	assert.Equal(t, []Entry{EntrySample, EntryInvalid}, got)
	assert.Equal(t, 2, r.Absent())
}

// A Page holds one array of samples as long as the page has lines: the
// struct is packed to keep it small (promtext's was 56 bytes).
func TestSampleStaysSmall(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(Sample[string]{}), uintptr(72))
}
