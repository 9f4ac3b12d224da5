package sim

import (
	"math"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/detrand"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
)

// Signal is what a pod's workload does at one tick, on every device it holds.
type Signal struct {
	// Activity is the graphics/compute engine active ratio it drives.
	Activity float64
	// SMActive, Tensor and DRAM are absolute ratios (0..1).
	SMActive float64
	Tensor   float64
	DRAM     float64
	// Load is an inference server's demand as a fraction of its capacity
	// (0 for training). It keeps its value while Stalled: clients still send.
	Load float64
	// MemFrac is the fraction of the memory it holds that is in use.
	MemFrac float64
	// Stalled is true once a device it holds has failed fatally: the job
	// crashed, its devices go quiet but keep their memory.
	Stalled    bool
	StalledFor float64 // simulated seconds since the stall
}

// Defaults of the profiles' knobs.
const (
	defaultTrainingIntensity = 0.92
	defaultTrainingMemory    = 0.86
	defaultVLLMMemory        = 0.90 // vLLM --gpu-memory-utilization default
	defaultSGLangMemory      = 0.88 // SGLang --mem-fraction-static, typical
	defaultInferenceMemory   = 0.55 // a server we do not simulate
	defaultIdleMemory        = 0.02 // a CUDA context and a small tensor
	degradeRampSeconds       = 300
)

// signal evaluates the pod's profile at tick k.
func (pm *podModel) signal(k int64) Signal {
	w := &pm.pod.Workload
	t := float64(k) * TickSeconds
	key := pm.key
	var s Signal
	switch w.Profile {
	case scenario.ProfileTrainingSteady, scenario.ProfileTrainingDegrading:
		base := w.Intensity
		if base == 0 {
			base = defaultTrainingIntensity
		}
		f := 1.0
		if w.Profile == scenario.ProfileTrainingDegrading {
			after := w.DegradeAfter.Seconds()
			if t > after {
				ramp := math.Min(1, (t-after)/degradeRampSeconds)
				f = 1 - (1-w.DegradeTo)*ramp
			}
		}
		s.Activity = clamp(base*f+0.025*detrand.Smooth(key, k, 24)+0.008*detrand.White(key, k), 0, 0.995)
		s.SMActive = s.Activity * 0.94
		s.Tensor = s.Activity * 0.62
		s.DRAM = s.Activity * 0.48
		s.MemFrac = memFrac(w.MemoryFraction, defaultTrainingMemory) + 0.008*detrand.Smooth(key^1, k, 36)
	case scenario.ProfileInferenceSteady, scenario.ProfileInferenceBursty, scenario.ProfileInferenceOverprov:
		s.Load = pm.load(k)
		s.Activity = clamp(0.05+0.88*s.Load+0.015*detrand.White(key, k), 0, 0.99)
		s.SMActive = s.Activity * 0.9
		s.Tensor = s.Activity * 0.38
		s.DRAM = clamp(0.04+0.7*s.Load, 0, 0.95)
		s.MemFrac = memFrac(w.MemoryFraction, pm.inferenceMemory())
	case scenario.ProfileIdle:
		s.MemFrac = memFrac(w.MemoryFraction, defaultIdleMemory)
	}
	if w.StartAfter > 0 && t < w.StartAfter.Seconds() && IsTrainingProfile(w.Profile) {
		// Waiting for its data: the job holds its memory and computes nothing.
		s.Activity, s.SMActive, s.Tensor, s.DRAM = 0, 0, 0, 0
	}
	if pm.stallAt >= 0 && t >= pm.stallAt {
		s.Stalled = true
		s.StalledFor = t - pm.stallAt
		s.Activity, s.SMActive, s.Tensor, s.DRAM = 0, 0, 0, 0
	}
	s.MemFrac = clamp(s.MemFrac, 0, 1)
	return s
}

func (pm *podModel) inferenceMemory() float64 {
	if inf := pm.pod.Inference; inf != nil {
		if inf.Server == scenario.ServerSGLang {
			return defaultSGLangMemory
		}
		return defaultVLLMMemory
	}
	return defaultInferenceMemory
}

// load is an inference workload's demand at tick k, 0..1 of capacity.
func (pm *podModel) load(k int64) float64 {
	w := &pm.pod.Workload
	key := pm.key
	t := float64(k) * TickSeconds
	switch w.Profile {
	case scenario.ProfileInferenceSteady:
		return clamp(0.58+0.08*detrand.Smooth(key, k, 60)+0.03*detrand.White(key^2, k), 0.05, 0.95)
	case scenario.ProfileInferenceBursty:
		period := w.BurstPeriod.Seconds()
		dur := w.BurstDuration.Seconds()
		x := math.Mod(t+pm.phase*period, period)
		bump := 0.0
		if x < dur {
			bump = math.Pow(math.Sin(math.Pi*x/dur), 0.6)
		}
		return clamp(0.16+0.8*bump+0.05*detrand.Smooth(key, k, 30)+0.03*detrand.White(key^2, k), 0.02, 0.99)
	case scenario.ProfileInferenceOverprov:
		return clamp(0.05+0.02*detrand.Smooth(key, k, 60)+0.01*detrand.White(key^2, k), 0.01, 0.2)
	}
	return 0
}

// IsTrainingProfile reports whether a profile trains.
func IsTrainingProfile(profile string) bool { return scenario.IsTraining(profile) }

// Slowdowns of the work on a device.
const (
	throttleSlowdown = 2.0 // clocks held at half speed
	// eccSlowdown is the work on a GPU that reported a non-fatal XID (a
	// high corrected-ECC rate, a contained error): retried and scrubbed
	// memory accesses, for eccSlowFor seconds.
	eccSlowdown = 1.8
	eccSlowFor  = 1800
	// neighbourSlowdown is how much a time-sliced or MPS GPU's other
	// consumers' activity slows a consumer: time slices go to them.
	neighbourSlowdown = 1.6
)

// slowdown is the factor by which the pod's work runs slower at tick k than
// on a healthy device of its own: throttling and recent non-fatal errors of
// the GPUs it holds, and the activity of the other consumers of a unit it
// shares.
func (pm *podModel) slowdown(k int64) float64 {
	t := float64(k) * TickSeconds
	f := 1.0
	for _, gm := range pm.gpus {
		throttled, erring := false, false
		for _, fl := range gm.g.Failures {
			at := fl.At.Seconds()
			if at > t {
				break
			}
			switch {
			case fl.Throttle != "":
				throttled = true
			case fl.XID != 0 && !fatal(fl) && t-at < eccSlowFor:
				erring = true
			}
		}
		if throttled {
			f *= throttleSlowdown
		}
		if erring {
			f *= eccSlowdown
		}
	}
	for _, u := range pm.units {
		if len(u.consumers) < 2 {
			continue
		}
		var others float64
		for _, c := range u.consumers {
			if c.pm != pm {
				others += c.pm.signal(k).Activity
			}
		}
		f *= 1 + neighbourSlowdown*math.Min(others, 1)
	}
	return f
}

func memFrac(configured, def float64) float64 {
	if configured > 0 {
		return configured
	}
	return def
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
