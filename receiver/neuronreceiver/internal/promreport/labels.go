package promreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// label returns a sample's label. prometheus_client writes a Python None
// label value as "None" (the script leaves memory_location at None on the
// per-core memory families), and neuron-monitor an unknown instance field as
// "": both are absent.
func label(m *dto.Metric, name string) (string, bool) {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			if v := l.GetValue(); v != "" && v != "None" {
				return v, true
			}
			return "", false
		}
	}
	return "", false
}

// intLabel reads a label that holds a non-negative integer (a core or device
// index, a count), as Python's str(int) writes it.
func intLabel(m *dto.Metric, name string) (int64, error) {
	s, ok := label(m, name)
	if !ok {
		return 0, fmt.Errorf("no %s label", name)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q is not a non-negative integer", name, s)
	}
	return n, nil
}

// value returns a sample's value, whatever type its family was declared
// with; false for a value that is not a finite number (absent).
func value(m *dto.Metric) (float64, bool) {
	var v float64
	switch {
	case m.Gauge != nil:
		v = m.GetGauge().GetValue()
	case m.Counter != nil:
		v = m.GetCounter().GetValue()
	case m.Untyped != nil:
		v = m.GetUntyped().GetValue()
	default:
		return 0, false
	}
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

// describe names a sample in a problem as the page writes it:
// family{label="value",…}.
func describe(family string, m *dto.Metric) string {
	var b strings.Builder
	b.WriteString(family)
	b.WriteByte('{')
	for i, l := range m.GetLabel() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.GetName())
		b.WriteByte('=')
		b.WriteString(strconv.Quote(l.GetValue()))
	}
	b.WriteByte('}')
	return b.String()
}
