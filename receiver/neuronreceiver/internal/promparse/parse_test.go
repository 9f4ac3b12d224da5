package promparse

import (
	"bytes"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What prometheus_client 0.x serves for one counter and one gauge.
const page = `# HELP execution_status_total Execution status total
# TYPE execution_status_total counter
execution_status_total{runtime_tag="llama",status_type="completed"} 50.0
execution_status_total{runtime_tag="llama",status_type="timed_out"} 0.0
# HELP execution_status_created Execution status total
# TYPE execution_status_created gauge
execution_status_created{runtime_tag="llama",status_type="completed"} 1.7487796e+09
# HELP neuroncore_utilization_ratio NeuronCore utilization ratio
# TYPE neuroncore_utilization_ratio gauge
neuroncore_utilization_ratio{neuroncore="0",runtime_tag="llama"} 0.8901827638996558
neuroncore_utilization_ratio{neuroncore="1",runtime_tag="llama"} 0.0
`

func values(t *testing.T, p Page, family string) []float64 {
	t.Helper()
	f := p.Families[family]
	require.NotNil(t, f, family)
	var out []float64
	for _, m := range f.GetMetric() {
		switch {
		case m.Counter != nil:
			out = append(out, m.GetCounter().GetValue())
		case m.Gauge != nil:
			out = append(out, m.GetGauge().GetValue())
		case m.Untyped != nil:
			out = append(out, m.GetUntyped().GetValue())
		default:
			t.Fatalf("%s has a sample without a value", family)
		}
	}
	return out
}

func TestCleanPage(t *testing.T) {
	p := Parse([]byte(page))
	assert.Zero(t, p.ErrorCount)
	assert.Equal(t, 11, p.Lines)
	assert.Equal(t, []float64{50, 0}, values(t, p, "execution_status_total"))
	assert.Equal(t, dto.MetricType_COUNTER, p.Families["execution_status_total"].GetType())
	assert.Equal(t, []float64{1.7487796e9}, values(t, p, "execution_status_created"))
	assert.Equal(t, []float64{0.8901827638996558, 0}, values(t, p, "neuroncore_utilization_ratio"))
}

// A bad line costs that line: the samples before and after it, in its own
// family and in the others, are kept, and the error names the line.
func TestBadLinesAreSkippedAndNamed(t *testing.T) {
	lines := strings.Split(page, "\n")
	lines[3] = `execution_status_total{runtime_tag="llama",status_type=timed_out} 0.0` // unquoted value
	lines[9] = `neuroncore_utilization_ratio{neuroncore="0",runtime_tag="llama"} 0.89 0.1`
	p := Parse([]byte(strings.Join(lines, "\n")))
	require.Equal(t, 2, p.ErrorCount, "%v", p.Errors)
	assert.Equal(t, 4, p.Errors[0].Line)
	assert.Contains(t, p.Errors[0].Reason, `expected '"' at start of label value`)
	assert.Equal(t, lines[3], p.Errors[0].Text)
	assert.Equal(t, 10, p.Errors[1].Line)
	assert.Contains(t, p.Errors[1].Error(), "line 10: ")
	assert.Equal(t, []float64{50}, values(t, p, "execution_status_total"))
	assert.Equal(t, dto.MetricType_COUNTER, p.Families["execution_status_total"].GetType())
	assert.Equal(t, []float64{1.7487796e9}, values(t, p, "execution_status_created"))
	assert.Equal(t, []float64{0}, values(t, p, "neuroncore_utilization_ratio"), "the line after the bad one is kept")
}

// Python's None where a number belongs means "no value": the sample is
// left out without an error.
func TestNoneValueIsMissingNotAnError(t *testing.T) {
	p := Parse([]byte(strings.Replace(page, "} 50.0", "} None", 1)))
	assert.Zero(t, p.ErrorCount, "%v", p.Errors)
	assert.Equal(t, []float64{0}, values(t, p, "execution_status_total"))
}

// A page cut in the middle of a line (the exporter died, a proxy timed
// out) keeps everything before the cut.
func TestTruncatedPage(t *testing.T) {
	cut := page[:strings.Index(page, "0.8901")+3]
	p := Parse([]byte(cut))
	require.Equal(t, 1, p.ErrorCount)
	assert.Equal(t, 10, p.Errors[0].Line)
	assert.Equal(t, []float64{50, 0}, values(t, p, "execution_status_total"))
	assert.NotContains(t, p.Families, "neuroncore_utilization_ratio", "its only sample was the cut one")
}

func TestGarbageIsBounded(t *testing.T) {
	garbage := strings.Repeat("<html>not metrics</html>\n", 3*MaxBadLines)
	p := Parse([]byte(garbage))
	assert.Equal(t, MaxBadLines, p.ErrorCount)
	assert.Len(t, p.Errors, MaxErrors)
	assert.Equal(t, MaxBadLines+1, p.GaveUpAt)
	assert.Equal(t, 3*MaxBadLines, p.Lines)
	assert.Empty(t, p.Families)
}

// FuzzParse: no input makes Parse panic or loop; every kept sample has a
// value; errors name lines of the page; a page expfmt reads whole is read
// the same.
func FuzzParse(f *testing.F) {
	f.Add([]byte(page))
	f.Add([]byte(strings.Replace(page, "0.0\n", "None\n", -1)))
	f.Add([]byte("# TYPE a counter\na 1\n# TYPE a gauge\na 2\nb{x=\"\\\"\"} 3 123\n"))
	f.Add([]byte("a{b=\"c\" 1\n{\"x\"} 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := Parse(data)
		if p.ErrorCount < len(p.Errors) || len(p.Errors) > MaxErrors {
			t.Fatalf("%d errors, %d kept", p.ErrorCount, len(p.Errors))
		}
		for _, e := range p.Errors {
			if e.Line < 1 || (e.Line > p.Lines && p.Lines > 0) {
				t.Fatalf("error on line %d of a %d-line page", e.Line, p.Lines)
			}
		}
		kept := 0
		for _, fam := range p.Families {
			for _, m := range fam.GetMetric() {
				kept++
				if m.Counter == nil && m.Gauge == nil && m.Untyped == nil && m.Summary == nil && m.Histogram == nil {
					t.Fatalf("%s: sample without a value", fam.GetName())
				}
			}
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		whole, err := parser.TextToMetricFamilies(bytes.NewReader(data))
		if err != nil {
			return
		}
		if p.ErrorCount != 0 {
			t.Fatalf("expfmt reads the page whole, Parse found %v", p.Errors)
		}
		n := 0
		for _, fam := range whole {
			n += len(fam.GetMetric())
		}
		if n != kept {
			t.Fatalf("expfmt reads %d samples, Parse %d", n, kept)
		}
	})
}
