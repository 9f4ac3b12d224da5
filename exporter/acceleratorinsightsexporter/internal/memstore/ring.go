package memstore

// chartRing is a bounded series for a chart: one point per step (a newer
// sample in the same step replaces the older), the oldest overwritten when
// full. float32 values and uint32 seconds keep a point at 8 bytes: a chart
// needs neither more precision nor dates past 2106.
type chartRing struct {
	t    []uint32
	v    []float32
	head int // next write
	n    int
}

func newChartRing(size int) *chartRing {
	return &chartRing{t: make([]uint32, size), v: make([]float32, size)}
}

// add appends a sample; false when it is older than the newest (out of
// order: a chart only moves forward), and dropped.
func (r *chartRing) add(sec uint32, v float64, step uint32) bool {
	if r.n > 0 {
		last := (r.head - 1 + len(r.t)) % len(r.t)
		lt := r.t[last]
		if sec < lt {
			return false
		}
		if step > 0 && sec/step == lt/step {
			r.t[last], r.v[last] = sec, float32(v)
			return true
		}
	}
	r.t[r.head], r.v[r.head] = sec, float32(v)
	r.head = (r.head + 1) % len(r.t)
	if r.n < len(r.t) {
		r.n++
	}
	return true
}

// each visits points oldest first.
func (r *chartRing) each(fn func(sec uint32, v float32)) {
	start := (r.head - r.n + len(r.t)) % len(r.t)
	for i := 0; i < r.n; i++ {
		j := (start + i) % len(r.t)
		fn(r.t[j], r.v[j])
	}
}

// counterRing keeps a cumulative counter's recent samples at full
// precision, for rates over the rate window.
type counterRing struct {
	t    [counterSamples]int64 // unix ms
	v    [counterSamples]float64
	head int
	n    int
}

// counterSamples per counter: the rate window is covered in this many
// steps (rate_window/15 apart).
const counterSamples = 16

func (r *counterRing) add(ms int64, v float64, stepMS int64) {
	if r.n > 0 {
		last := (r.head - 1 + counterSamples) % counterSamples
		if ms < r.t[last] {
			return
		}
		if stepMS > 0 && ms/stepMS == r.t[last]/stepMS && r.n > 1 {
			r.t[last], r.v[last] = ms, v
			return
		}
	}
	r.t[r.head], r.v[r.head] = ms, v
	r.head = (r.head + 1) % counterSamples
	if r.n < counterSamples {
		r.n++
	}
}

// rate is the counter's increase per second over samples newer than
// fromMS, resets counted as Prometheus counts them (a drop starts again
// from zero). ok is false with fewer than two samples.
func (r *counterRing) rate(fromMS int64) (float64, bool) {
	var firstT, lastT int64
	var prev, inc float64
	seen := 0
	start := (r.head - r.n + counterSamples) % counterSamples
	for i := 0; i < r.n; i++ {
		j := (start + i) % counterSamples
		if r.t[j] < fromMS {
			continue
		}
		v := r.v[j]
		if seen == 0 {
			firstT = r.t[j]
		} else if v >= prev {
			inc += v - prev
		} else {
			inc += v
		}
		prev, lastT = v, r.t[j]
		seen++
	}
	if seen < 2 || lastT <= firstT {
		return 0, false
	}
	return inc / (float64(lastT-firstT) / 1000), true
}
