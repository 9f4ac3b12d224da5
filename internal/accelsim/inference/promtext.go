// Package inference serves the /metrics pages of the inference servers the
// simulator runs in pods: vLLM (V1 metric names) and SGLang, both written in
// the exact text prometheus_client produces — families in registration
// order, labels sorted, floats as Python prints them, `_created` samples as
// separate gauge families for vLLM, and SGLang's multiprocess layout (no
// `_created`, `_sum` before the buckets).
package inference

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// pyFloat formats a float as prometheus_client's floatToGoString does:
// Python's repr, switched to Go-style exponents for large positive values
// (including the library's "e+010" quirk past ten digits).
func pyFloat(b []byte, d float64) []byte {
	switch {
	case math.IsInf(d, 1):
		return append(b, "+Inf"...)
	case math.IsInf(d, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(d):
		return append(b, "NaN"...)
	}
	s := pyRepr(d)
	dot := strings.IndexByte(s, '.')
	if d > 0 && dot > 6 {
		mantissa := strings.TrimRight(s[:1]+"."+s[1:dot]+s[dot+1:], "0.")
		b = append(b, mantissa...)
		b = append(b, "e+0"...)
		return strconv.AppendInt(b, int64(dot-1), 10)
	}
	return append(b, s...)
}

// pyRepr is Python's repr(float): shortest round-trip digits, fixed
// notation for 1e-4 <= |x| < 1e16 (always with a fractional part), else
// scientific with a two-digit exponent.
func pyRepr(d float64) string {
	if d == 0 {
		if math.Signbit(d) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(d)
	if a >= 1e16 || a < 1e-4 {
		s := strconv.FormatFloat(d, 'e', -1, 64)
		return s
	}
	s := strconv.FormatFloat(d, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}

// label is one name/value pair.
type label struct{ name, value string }

// writer accumulates an exposition: the text format, or OpenMetrics
// (om) with the exemplars of ex on the latency buckets at time now.
type writer struct {
	b   []byte
	om  bool
	ex  *exemplars
	now float64
}

// counterHeader writes a counter's HELP and TYPE. name ends in _total;
// the text format declares it so, OpenMetrics without the suffix.
func (w *writer) counterHeader(name, help string) {
	if w.om {
		name = strings.TrimSuffix(name, "_total")
	}
	w.header(name, help, "counter")
}

// createdHeader declares a series' _created samples: a gauge family of
// their own in the text format, part of their family in OpenMetrics.
func (w *writer) createdHeader(name, help string) {
	if !w.om {
		w.header(name, help, "gauge")
	}
}

// end closes an OpenMetrics exposition.
func (w *writer) end() []byte {
	if w.om {
		w.b = append(w.b, "# EOF\n"...)
	}
	return w.b
}

func (w *writer) header(name, help, typ string) {
	w.b = append(w.b, "# HELP "...)
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = append(w.b, escapeHelp(help)...)
	w.b = append(w.b, "\n# TYPE "...)
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = append(w.b, typ...)
	w.b = append(w.b, '\n')
}

// sample writes one line; labels are sorted as prometheus_client sorts them.
func (w *writer) sample(name string, labels []label, v float64) {
	w.series(name, labels, v)
	w.b = append(w.b, '\n')
}

// series writes a sample line without its line end.
func (w *writer) series(name string, labels []label, v float64) {
	w.b = append(w.b, name...)
	if len(labels) > 0 {
		sorted := append([]label(nil), labels...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
		w.b = append(w.b, '{')
		for i, l := range sorted {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, l.name...)
			w.b = append(w.b, '=', '"')
			w.b = append(w.b, escapeLabel(l.value)...)
			w.b = append(w.b, '"')
		}
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ' ')
	w.b = pyFloat(w.b, v)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string {
	if !strings.ContainsAny(s, "\\\n") {
		return s
	}
	return helpEscaper.Replace(s)
}

func escapeLabel(s string) string {
	if !strings.ContainsAny(s, "\\\n\"") {
		return s
	}
	return labelEscaper.Replace(s)
}

func with(labels []label, extra ...label) []label {
	out := make([]label, 0, len(labels)+len(extra))
	out = append(out, labels...)
	return append(out, extra...)
}
