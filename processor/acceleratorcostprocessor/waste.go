package acceleratorcostprocessor

import "math"

// interval is everything the waste split needs about one resource over one
// pair of data points. Fractions are of this resource's cost.
type interval struct {
	cost float64

	unavailable bool
	allocated   bool
	// reserved: only a scheduler's placeholder holds it (see splitWaste).
	reserved bool
	// fragmentation is the fraction of this resource's cost that pays for
	// MIG capacity no profile can use.
	fragmentation float64

	activity    float64
	hasActivity bool

	training         bool
	trainingSignal   float64
	hasTraining      bool
	baseline         float64
	baselineWarm     bool
	inference        bool
	hasInference     bool // KV cache and queue of the serving pod, fresh
	kvCache, waiting float64

	// Window peaks, when the window is covered well enough.
	windowOK               bool
	peakMem, peakAct       float64
	hasPeakMem, hasPeakAct bool
}

// splitWaste divides an interval's cost among the waste reasons. Reasons are
// checked in a fixed order and are exclusive, so the waste of an interval
// never exceeds its cost and nothing is counted twice:
//
//  1. unavailable: the device is in a failure mode → all of it;
//  2. fragmentation: the stranded MIG share → that fraction;
//  3. unallocated: nobody holds it → all the rest; reserved (only a
//     scheduler's placeholder holds it) counts the same while the device
//     shows no activity (below idle_activity, or no activity signal), and
//     as no waste while it is busy: a reservation pod keeps a GPU for
//     workloads the scheduler places on it without naming them (Run:ai's
//     fractions), so a busy reserved GPU is in use by someone;
//  4. one of, on the rest: idle (activity below idle_activity → all);
//     training_inefficiency (training below its baseline → 1 − signal/baseline);
//     inference_underutilized (serving with an empty queue, low activity and
//     KV cache → 1 − load/target); overprovisioned_memory (window peak memory
//     far below the resource's memory → 1 − max(peak memory, peak activity) ×
//     (1 + headroom)).
func splitWaste(in interval, cfg *WasteConfig) (w [numWasteReasons]float64) {
	if in.cost <= 0 {
		return w
	}
	if in.unavailable {
		w[wasteUnavailable] = in.cost
		return w
	}
	rest := in.cost
	if f := clamp01(in.fragmentation); f > 0 {
		w[wasteFragmentation] = in.cost * f
		rest -= w[wasteFragmentation]
	}
	if !in.allocated {
		if in.reserved && in.hasActivity && in.activity >= cfg.IdleActivity {
			return w
		}
		w[wasteUnallocated] = rest
		return w
	}
	if reason, f := behaviouralWaste(in, cfg); f > 0 {
		w[reason] = rest * f
	}
	return w
}

// behaviouralWaste picks the one reason an allocated, working resource
// wastes money for in this interval, and the fraction it wastes.
func behaviouralWaste(in interval, cfg *WasteConfig) (int, float64) {
	if in.hasActivity && in.activity < cfg.IdleActivity {
		return wasteIdle, 1
	}
	if in.training && in.hasTraining && in.baselineWarm && in.baseline > 0 &&
		in.trainingSignal < in.baseline*(1-cfg.TrainingTolerance) {
		return wasteTraining, clamp01(1 - in.trainingSignal/in.baseline)
	}
	if in.inference && in.hasInference && in.hasActivity && in.waiting == 0 &&
		in.activity < cfg.InferenceMaxActivity && in.kvCache < cfg.InferenceMaxKVCache {
		load := math.Max(in.activity, in.kvCache)
		return wasteInference, clamp01(1 - load/cfg.InferenceTargetUtilization)
	}
	if in.windowOK && in.hasPeakMem && in.hasPeakAct && in.peakMem*(1+cfg.Headroom) < cfg.MemoryOverprovisionedBelow {
		need := math.Max(in.peakMem, in.peakAct) * (1 + cfg.Headroom)
		return wasteMemory, clamp01(1 - need)
	}
	return 0, 0
}

func clamp01(f float64) float64 {
	if math.IsNaN(f) || f < 0 {
		return 0
	}
	return math.Min(f, 1)
}
