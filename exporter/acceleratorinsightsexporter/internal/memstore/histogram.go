package memstore

import (
	"slices"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
)

// histRing keeps recent cumulative snapshots of one histogram, for
// percentiles over the rate window.
type histRing struct {
	bounds []float64
	t      [counterSamples]int64
	counts [counterSamples][]float64
	head   int
	n      int
}

func (h *histRing) add(ms int64, bounds []float64, counts []float64, stepMS int64) {
	if !slices.Equal(bounds, h.bounds) {
		// New buckets: the old snapshots cannot be subtracted.
		h.bounds, h.n, h.head = slices.Clone(bounds), 0, 0
	}
	if h.n > 0 {
		last := (h.head - 1 + counterSamples) % counterSamples
		if ms < h.t[last] {
			return
		}
		if stepMS > 0 && ms/stepMS == h.t[last]/stepMS && h.n > 1 {
			h.t[last] = ms
			h.counts[last] = append(h.counts[last][:0], counts...)
			return
		}
	}
	h.t[h.head] = ms
	h.counts[h.head] = append(h.counts[h.head][:0], counts...)
	h.head = (h.head + 1) % counterSamples
	if h.n < counterSamples {
		h.n++
	}
}

// quantiles over the snapshots newer than fromMS: the last minus the
// first (or the last alone after a reset).
func (h *histRing) quantiles(fromMS int64) fleet.Quantiles {
	if h == nil || h.n < 2 {
		return fleet.Quantiles{}
	}
	start := (h.head - h.n + counterSamples) % counterSamples
	first := -1
	for i := 0; i < h.n; i++ {
		j := (start + i) % counterSamples
		if h.t[j] >= fromMS {
			first = j
			break
		}
	}
	last := (h.head - 1 + counterSamples) % counterSamples
	if first < 0 || first == last {
		return fleet.Quantiles{}
	}
	delta := make([]float64, len(h.counts[last]))
	for i := range delta {
		delta[i] = h.counts[last][i] - h.counts[first][i]
		if delta[i] < 0 {
			copy(delta, h.counts[last])
			break
		}
	}
	return fleet.Quantiles{
		P50: fleet.Quantile(0.5, h.bounds, delta),
		P90: fleet.Quantile(0.9, h.bounds, delta),
		P99: fleet.Quantile(0.99, h.bounds, delta),
	}
}
