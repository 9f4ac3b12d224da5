package acceleratork8sreceiver

import "sort"

// histograms are the cumulative cold-start histograms, one per workload
// and phase, for the life of the receiver.
type histograms struct {
	bounds []float64
	series map[histKey]*histogram
}

type histKey struct {
	w     workload
	phase string
}

type histogram struct {
	counts   []uint64 // len(bounds)+1
	count    uint64
	sum      float64
	min, max float64
}

func newHistograms(bounds []float64) *histograms {
	return &histograms{bounds: bounds, series: map[histKey]*histogram{}}
}

func (h *histograms) observe(w workload, phase string, v float64) {
	k := histKey{w, phase}
	s := h.series[k]
	if s == nil {
		s = &histogram{counts: make([]uint64, len(h.bounds)+1), min: v, max: v}
		h.series[k] = s
	}
	// Buckets are upper-inclusive, as Prometheus' le and OTLP's bounds are.
	s.counts[sort.SearchFloat64s(h.bounds, v)]++
	s.count++
	s.sum += v
	s.min, s.max = min(s.min, v), max(s.max, v)
}
