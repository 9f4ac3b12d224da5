package fleet

// Reading folds one chart's points of one resource at one time into one
// value, the same way in both backends. The resource's own points win:
// memory by category adds up, the rest (temperatures by sensor) takes the
// highest. Without own points, the per-process points stand for the
// resource, as on a NeuronCore, whose utilization neuron-monitor reports
// per runtime: utilization and memory add up (utilization at most 1), the
// rest takes the highest.
type Reading struct {
	Chart       string
	own, proc   float64
	nOwn, nProc int
}

func (r *Reading) fold(acc *float64, n *int, v float64, add bool) {
	switch {
	case *n == 0:
		*acc = v
	case add:
		*acc += v
	case v > *acc:
		*acc = v
	}
	*n++
}

// Add counts a point; perProcess for one with process.pid.
func (r *Reading) Add(v float64, perProcess bool) {
	if perProcess {
		r.fold(&r.proc, &r.nProc, v, r.Chart == "utilization" || r.Chart == "memory_used")
		return
	}
	r.fold(&r.own, &r.nOwn, v, r.Chart == "memory_used")
}

// Value is the folded value; ok is false without points.
func (r *Reading) Value() (float64, bool) {
	switch {
	case r.nOwn > 0:
		return r.own, true
	case r.nProc > 0:
		if r.Chart == "utilization" && r.proc > 1 {
			return 1, true
		}
		return r.proc, true
	}
	return 0, false
}
