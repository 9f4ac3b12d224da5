package fleet

import (
	"math"
	"sort"
)

// Quantile estimates the q-quantile of observations counted per bucket
// (counts has one more entry than bounds: the +Inf bucket) as Prometheus's
// histogram_quantile does, so that both backends agree: the first bucket
// whose cumulative count reaches the rank, linear interpolation inside it
// (the lowest bucket starting at 0), and the highest finite bound for a rank
// in +Inf. Nil when nothing was observed.
func Quantile(q float64, bounds, counts []float64) *float64 {
	if len(counts) != len(bounds)+1 || len(bounds) == 0 {
		return nil
	}
	cum := make([]float64, len(counts))
	var total float64
	for i, c := range counts {
		total += c
		cum[i] = total
	}
	if total <= 0 || math.IsNaN(total) {
		return nil
	}
	rank := q * total
	b := sort.Search(len(cum)-1, func(i int) bool { return cum[i] >= rank })
	var v float64
	switch {
	case b == len(cum)-1:
		v = bounds[len(bounds)-1]
	case b == 0 && bounds[0] <= 0:
		v = bounds[0]
	default:
		start, count := 0.0, cum[b]
		if b > 0 {
			start = bounds[b-1]
			count -= cum[b-1]
			rank -= cum[b-1]
		}
		v = start + (bounds[b]-start)*(rank/count)
	}
	return &v
}
