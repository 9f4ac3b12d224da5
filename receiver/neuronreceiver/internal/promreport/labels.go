package promreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
)

// label returns a sample's label. prometheus_client writes a Python None
// label value as "None" (the script leaves memory_location at None on the
// per-core memory families), and neuron-monitor an unknown instance field as
// "": both are absent.
func label(m *sample, name string) (string, bool) {
	for _, l := range m.Labels {
		if l.Name == name {
			if v := l.Value; v != "" && v != "None" {
				return v, true
			}
			return "", false
		}
	}
	return "", false
}

// intLabel reads a label that holds a non-negative integer (a core or device
// index, a count), as Python's str(int) writes it.
func intLabel(m *sample, name string) (int64, error) {
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
func value(m *sample) (float64, bool) {
	v := m.Value
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

// describe names a sample in a problem as the page writes it:
// family{label="value",…}.
func describe(family string, m *sample) string {
	var b strings.Builder
	b.WriteString(family)
	b.WriteByte('{')
	for i, l := range m.Labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.Name)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(l.Value))
	}
	b.WriteByte('}')
	return b.String()
}

// sample is one sample line of the page.
type sample = promscrape.Sample[string]

// byName groups a page's samples by name, in page order: the families the
// script declares, each of its counters' `_total` and `_created` series
// their own (it declares them so).
func byName(page promscrape.Page) map[string][]*sample {
	families := map[string][]*sample{}
	for i := range page.Samples {
		s := &page.Samples[i]
		families[s.Name] = append(families[s.Name], s)
	}
	return families
}

// Parse reads the script's page. A sample whose value is Python's None (the
// script printing a value it does not have) is left out without an error.
func Parse(text string) promscrape.Page {
	return promscrape.ParseOptions{AbsentValues: []string{"None"}}.Parse(text)
}
