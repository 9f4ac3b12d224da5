package promtext

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSamples(t *testing.T) {
	doc := Parse(`# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 14.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 412.0

nv_inference_request_success{model="tensorrt_llm",version="1"} 90
tgi_queue_size 2
escaped{path="C:\\dir\\\"x\"\nnext",plain="a b"} 1e+09 1700000000000
spaced { a = "1" , b="2", } -Inf
{"vllm.utf8.name",engine="0"} NaN
om_counter_total{a="b"} 3 # {trace_id="abc"} 1.0 1700000000.1
windows_line 7` + "\r\n")
	require.Empty(t, doc.Errors)
	require.Len(t, doc.Samples, 9)

	s := doc.Samples[0]
	assert.Equal(t, "vllm:num_requests_running", s.Name)
	assert.Equal(t, []Label{{"engine", "0"}, {"model_name", "meta-llama/Llama-3.1-8B-Instruct"}}, s.Labels)
	assert.Equal(t, 14.0, s.Value)
	assert.Equal(t, 3, s.Line)

	le, ok := doc.Samples[1].Label("le")
	assert.True(t, ok)
	assert.Equal(t, "+Inf", le)

	assert.Equal(t, "tgi_queue_size", doc.Samples[3].Name)
	assert.Empty(t, doc.Samples[3].Labels)

	esc := doc.Samples[4]
	assert.Equal(t, []Label{{"path", "C:\\dir\\\"x\"\nnext"}, {"plain", "a b"}}, esc.Labels)
	assert.Equal(t, 1e9, esc.Value)

	assert.Equal(t, []Label{{"a", "1"}, {"b", "2"}}, doc.Samples[5].Labels)
	assert.True(t, math.IsInf(doc.Samples[5].Value, -1))

	assert.Equal(t, "vllm.utf8.name", doc.Samples[6].Name)
	assert.Equal(t, []Label{{"engine", "0"}}, doc.Samples[6].Labels)
	assert.True(t, math.IsNaN(doc.Samples[6].Value))

	assert.Equal(t, 3.0, doc.Samples[7].Value, "exemplar ignored")
	assert.Equal(t, "windows_line", doc.Samples[8].Name)
	assert.Equal(t, 12, doc.Lines)
}

func TestParseSkipsBadLinesKeepsRest(t *testing.T) {
	tests := []struct {
		line, reason string
	}{
		{`9starts_with_digit 1`, "metric name expected"},
		{`no_value`, "space and value expected after the series"},
		{`no_value{a="b"}`, "space and value expected after the series"},
		{`bad_value{a="b"} fourteen`, "value is not a number"},
		{`unclosed{a="b" 1`, "',' or '}' expected in label set"},
		{`unclosed{a="b",`, "unterminated label set"},
		{`open_value{a="b} 1`, `unterminated value of label "a"`},
		{`no_equals{a "b"} 1`, `'=' expected after label "a"`},
		{`unquoted{a=b} 1`, `quoted value expected for label "a"`},
		{`bad_label{1a="b"} 1`, "label name expected"},
		{`ts_not_number 1 yesterday`, "timestamp is not a number"},
		{`trailing 1 2 3`, "unexpected text after the timestamp"},
		{`{} 1`, "metric name expected"},
		{`{"a","b"} 1`, "metric named twice"},
		{`name{"other"} 1`, "metric named twice"},
		{`{"unterminated 1`, "unterminated quoted name"},
		{`trailing_escape{a="b\`, `unterminated value of label "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			doc := Parse("good_before 1\n" + tt.line + "\ngood_after 2\n")
			require.Len(t, doc.Samples, 2, "the lines around a bad one are kept")
			assert.Equal(t, "good_after", doc.Samples[1].Name)
			require.Len(t, doc.Errors, 1)
			assert.Equal(t, 2, doc.Errors[0].Line)
			assert.Equal(t, tt.reason, doc.Errors[0].Reason)
			assert.Equal(t, tt.line, doc.Errors[0].Text)
		})
	}
}

func TestParseBoundsErrors(t *testing.T) {
	doc := Parse(strings.Repeat("garbage line\n", 1000) + "ok 1\n" + strings.Repeat("x", 500) + "\n")
	assert.Len(t, doc.Samples, 1)
	assert.Equal(t, 1001, doc.ErrorCount)
	assert.Len(t, doc.Errors, MaxErrors)
	long := Parse(strings.Repeat("y", 500) + "{\n")
	require.Len(t, long.Errors, 1)
	assert.Len(t, long.Errors[0].Text, maxExcerpt+len("…"))
}

// Labels of one sample must not change when later samples are parsed (they
// share one backing array).
func TestLabelsAreStable(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteString(`m{a="`)
		b.WriteString(strings.Repeat("v", i%7))
		b.WriteString(`",b="x"} 1` + "\n")
	}
	doc := Parse(b.String())
	require.Len(t, doc.Samples, 200)
	for i, s := range doc.Samples {
		require.Equal(t, []Label{{"a", strings.Repeat("v", i%7)}, {"b", "x"}}, s.Labels, "sample %d", i)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 14.0\n")
	f.Add("# TYPE a counter\na_total{x=\"\\\\\\\"\\n\"} 1 2\n{\"u.t.f\",l=\"v\"} +Inf # {t=\"1\"} 1\n")
	f.Add("a{b=\"c\",} 1\r\nbroken{\n")
	f.Fuzz(func(t *testing.T, text string) {
		doc := Parse(text)
		if doc.ErrorCount < len(doc.Errors) || len(doc.Errors) > MaxErrors {
			t.Fatalf("error accounting: count %d, kept %d", doc.ErrorCount, len(doc.Errors))
		}
		lines := strings.Count(text, "\n")
		if !strings.HasSuffix(text, "\n") && text != "" {
			lines++
		}
		if doc.Lines != lines {
			t.Fatalf("read %d lines of %d", doc.Lines, lines)
		}
		if len(doc.Samples)+doc.ErrorCount > lines {
			t.Fatalf("%d samples and %d errors from %d lines", len(doc.Samples), doc.ErrorCount, lines)
		}
		prev := 0
		for _, s := range doc.Samples {
			if s.Name == "" {
				t.Fatal("sample without a name")
			}
			if s.Line <= prev || s.Line > lines {
				t.Fatalf("sample line %d after %d (of %d)", s.Line, prev, lines)
			}
			prev = s.Line
		}
	})
}
