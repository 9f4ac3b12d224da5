package promreport

import (
	"sort"
	"strings"
)

// counters turns the exporter's cumulative counters back into the
// per-period counts neuron-monitor reports, so that the mapping keeps one
// kind of running total for both inputs.
//
// A series seen for the first time counts from its creation, as Prometheus
// reads a new series. A counter that went down, or whose `_created` time
// changed, was reset: the script clears every series when no runtime is
// left, and restarts from zero when it restarts; its new value is all new.
type counters struct {
	last map[string]counterSample
	seen map[string]bool
}

type counterSample struct {
	value   float64
	created float64 // 0: the page had no _created sample for it
}

func newCounters() *counters {
	return &counters{last: map[string]counterSample{}, seen: map[string]bool{}}
}

// delta returns the count since the previous scrape of the series.
func (c *counters) delta(key string, now counterSample) float64 {
	c.seen[key] = true
	prev, ok := c.last[key]
	c.last[key] = now
	reset := !ok || now.value < prev.value || (now.created != 0 && prev.created != 0 && now.created != prev.created)
	if reset {
		return now.value
	}
	return now.value - prev.value
}

// endScrape forgets the series the scrape did not have: when one comes
// back, it is new.
func (c *counters) endScrape() {
	for k := range c.last {
		if !c.seen[k] {
			delete(c.last, k)
		}
	}
	clear(c.seen)
}

// seriesKey names one series of a family: its canonical name and every
// label, sorted.
func seriesKey(family string, m *sample) string {
	pairs := make([]string, 0, len(m.Labels))
	for _, l := range m.Labels {
		pairs = append(pairs, l.Name+"="+l.Value)
	}
	sort.Strings(pairs)
	return family + "{" + strings.Join(pairs, ",") + "}"
}
