package sim

// accumulator integrates a per-tick rate over simulated time. It caches the
// sum over complete ticks so that reading it at increasing times costs only
// the ticks in between; a read at an earlier time recomputes from zero, so
// the result never depends on the order of reads.
type accumulator struct {
	tick int64
	sum  float64 // ∫ rate over ticks [0, tick)
}

// at returns ∫₀ᵗ rate: complete ticks plus the elapsed part of the current one.
func (a *accumulator) at(t float64, rate func(k int64) float64) float64 {
	k := Tick(t)
	if k < a.tick {
		a.tick, a.sum = 0, 0
	}
	for a.tick < k {
		a.sum += rate(a.tick) * TickSeconds
		a.tick++
	}
	return a.sum + rate(k)*(t-float64(k)*TickSeconds)
}
