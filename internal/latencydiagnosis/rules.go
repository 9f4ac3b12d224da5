package latencydiagnosis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Signals are what one endpoint showed over the window being judged. A
// signal the agent did not measure is left at its zero value with its
// Has… flag false, and no rule reads it.
type Signals struct {
	// Latency percentiles (p95, seconds) of the window.
	TTFT, ITL       float64
	HasTTFT, HasITL bool

	// KVCache is the server's KV-cache usage (0..1, the window's max);
	// Preemptions the requests preempted per second.
	KVCache, Preemptions float64
	HasKVCache           bool
	// Waiting and Running are the mean requests queued and executing;
	// MaxRunning the server's limit (vLLM max_num_seqs), 0 when unknown.
	Waiting, Running, MaxRunning float64
	HasQueue                     bool

	// SMActive and TensorActive are the device's activity (0..1).
	SMActive, TensorActive float64
	HasActivity            bool
	// PowerThrottle and ThermalThrottle are the fractions of the window
	// the clocks were held down for that reason.
	PowerThrottle, ThermalThrottle float64
	HasThrottle                    bool
	// XIDs and ECC are the device's errors within the window.
	XIDs, ECC int

	// Shared: the device is time-sliced or MPS-shared; NeighbourActivity is
	// the other consumers' share of its activity (0..1).
	Shared            bool
	NeighbourActivity float64

	// ColdReplicas of Replicas became ready within the window (a scale-up
	// or a restart).
	ColdReplicas, Replicas int
	// ZoneImbalance is the zone rule's evidence, empty when balanced.
	ZoneImbalance string
}

// Thresholds of the rules. They are the documented defaults; a component
// may take them from its configuration.
type Thresholds struct {
	// Regression: the window's p95 is at least Ratio × the baseline's and
	// at least MinTTFT / MinITL seconds above it (so that a fast endpoint's
	// jitter is no regression).
	Ratio, MinTTFT, MinITL float64
	// Deviations: the window's p95 must also lie above the baseline by
	// more than this many of the baseline's spreads (its windows' standard
	// deviation), so that an endpoint whose normal swings (bursty traffic,
	// a histogram bucket edge) is judged against its swing, not its mean.
	Deviations float64
	// MinSamples windows make a baseline.
	MinSamples int

	KVCacheHigh     float64 // with preemptions
	KVCacheFull     float64 // without
	QueueAtLimit    float64 // Running ≥ this × MaxRunning
	SMSaturated     float64
	TensorSaturated float64
	Throttled       float64
	NoisyNeighbour  float64
}

// DefaultThresholds are the rules' defaults.
var DefaultThresholds = Thresholds{
	Ratio: 1.5, MinTTFT: 0.05, MinITL: 0.005, Deviations: 3, MinSamples: 12,
	KVCacheHigh: 0.90, KVCacheFull: 0.98, QueueAtLimit: 0.90,
	SMSaturated: 0.90, TensorSaturated: 0.80, Throttled: 0.20, NoisyNeighbour: 0.30,
}

// Baseline is an endpoint's own normal: its p95 latencies over past
// windows of steady traffic, as the component persists it.
type Baseline struct {
	TTFT, ITL float64
	// TTFTSpread and ITLSpread are the standard deviations of the windows'
	// p95 around TTFT and ITL (0: flat or unknown).
	TTFTSpread, ITLSpread float64
	// TTFTBucketTop and ITLBucketTop are the upper bounds of the histogram
	// buckets TTFT and ITL fall in (0: unknown). A p95 within the same
	// bucket is interpolated inside it: the histogram cannot tell it from
	// the baseline, so it is no regression.
	TTFTBucketTop, ITLBucketTop float64
	Samples                     int
}

// Diagnosis is one finding of kind latency_regression.
type Diagnosis struct {
	Cause string
	// Evidence is `key=value` pairs: the regression, then the cause's
	// signals.
	Evidence string
	Action   string
	// Also are the other causes whose evidence was present, weakest last.
	Also []string
}

// rule is one explainable cause: fires returns its strength (0 when its
// evidence is absent) and the signals it rests on.
type rule struct {
	cause  string
	action string
	fires  func(s *Signals, t *Thresholds) (float64, []string)
}

func kv(k string, v float64) string { return fmt.Sprintf("%s=%.3g", k, v) }

var rules = []rule{
	{accelschema.CauseUnhealthyDevice, "drain the endpoint's pods from the device and follow the XID/ECC event's recommended action (accelerator.health.action)",
		func(s *Signals, _ *Thresholds) (float64, []string) {
			if s.XIDs == 0 && s.ECC == 0 {
				return 0, nil
			}
			return 1, []string{fmt.Sprintf("xid_events=%d", s.XIDs), fmt.Sprintf("ecc_uncorrected=%d", s.ECC)}
		}},
	{accelschema.CauseThrottling, "check the device's power cap and cooling (accelerator.clock.throttle.* by reason); move the endpoint off a throttled device",
		func(s *Signals, t *Thresholds) (float64, []string) {
			if !s.HasThrottle || max(s.PowerThrottle, s.ThermalThrottle) < t.Throttled {
				return 0, nil
			}
			return 0.8 + max(s.PowerThrottle, s.ThermalThrottle)/10, []string{kv("throttle_power", s.PowerThrottle), kv("throttle_thermal", s.ThermalThrottle)}
		}},
	{accelschema.CauseKVCachePressure, "give the KV cache more room (gpu_memory_utilization, a shorter max_model_len, KV-cache quantisation) or add replicas",
		func(s *Signals, t *Thresholds) (float64, []string) {
			switch {
			case !s.HasKVCache:
				return 0, nil
			case s.KVCache >= t.KVCacheHigh && s.Preemptions > 0:
				return 0.9, []string{kv("kv_cache_usage", s.KVCache), kv("preemptions_per_s", s.Preemptions)}
			case s.KVCache >= t.KVCacheFull:
				return 0.7, []string{kv("kv_cache_usage", s.KVCache)}
			}
			return 0, nil
		}},
	{accelschema.CauseQueueing, "add replicas (or raise the autoscaler's target): requests wait with the server at its concurrency limit",
		func(s *Signals, t *Thresholds) (float64, []string) {
			if !s.HasQueue || s.Waiting < 1 || s.MaxRunning <= 0 || s.Running < t.QueueAtLimit*s.MaxRunning {
				return 0, nil
			}
			return 0.85, []string{kv("requests_waiting", s.Waiting), kv("requests_running", s.Running), kv("max_running", s.MaxRunning)}
		}},
	{accelschema.CauseNoisyNeighbour, "give the endpoint a device of its own (an exclusive GPU or a MIG instance) instead of a time-sliced or MPS share",
		func(s *Signals, t *Thresholds) (float64, []string) {
			if !s.Shared || s.NeighbourActivity < t.NoisyNeighbour {
				return 0, nil
			}
			return 0.75, []string{"shared_device=true", kv("neighbour_activity", s.NeighbourActivity)}
		}},
	{accelschema.CauseDeviceSaturation, "add replicas or use a larger device (or a quantised model): the device's compute is saturated",
		func(s *Signals, t *Thresholds) (float64, []string) {
			if !s.HasActivity || (s.SMActive < t.SMSaturated && s.TensorActive < t.TensorSaturated) {
				return 0, nil
			}
			return 0.6, []string{kv("sm_active", s.SMActive), kv("tensor_active", s.TensorActive)}
		}},
	{accelschema.CauseColdReplica, "keep warm capacity (a higher minimum replica count, pre-pulled images, a readiness probe that waits for the model) so scale-ups do not serve cold",
		func(s *Signals, _ *Thresholds) (float64, []string) {
			if s.ColdReplicas == 0 {
				return 0, nil
			}
			return 0.5, []string{fmt.Sprintf("cold_replicas=%d", s.ColdReplicas), fmt.Sprintf("replicas=%d", s.Replicas)}
		}},
	{accelschema.CauseZoneImbalance, "spread the replicas across zones (topologySpreadConstraints on topology.kubernetes.io/zone) with capacity in each",
		func(s *Signals, _ *Thresholds) (float64, []string) {
			if s.ZoneImbalance == "" {
				return 0, nil
			}
			return 0.4, []string{s.ZoneImbalance}
		}},
}

// Regressed reports whether the window's latencies regress against the
// baseline, and the evidence of it.
func Regressed(s *Signals, b Baseline, t Thresholds) (string, bool) {
	if b.Samples < t.MinSamples {
		return "", false
	}
	var ev []string
	check := func(name string, has bool, now, base, spread, bucketTop, minDelta float64) {
		if has && base > 0 && now >= t.Ratio*base && now-base >= minDelta &&
			now > base+t.Deviations*spread && (bucketTop <= 0 || now > bucketTop) {
			ev = append(ev, kv(name+"_p95", now), kv(name+"_baseline_p95", base))
			if spread > base*1e-6 { // not rounding noise of a flat baseline
				ev = append(ev, kv(name+"_baseline_spread", spread))
			}
		}
	}
	check("ttft", s.HasTTFT, s.TTFT, b.TTFT, b.TTFTSpread, b.TTFTBucketTop, t.MinTTFT)
	check("itl", s.HasITL, s.ITL, b.ITL, b.ITLSpread, b.ITLBucketTop, t.MinITL)
	return strings.Join(ev, " "), len(ev) > 0
}

// Diagnose returns the finding for a regressed window, ok false when the
// latencies are within the baseline.
func Diagnose(s Signals, b Baseline, t Thresholds) (Diagnosis, bool) {
	regression, ok := Regressed(&s, b, t)
	if !ok {
		return Diagnosis{}, false
	}
	type fired struct {
		r        *rule
		strength float64
		evidence []string
	}
	var all []fired
	for i := range rules {
		if strength, ev := rules[i].fires(&s, &t); strength > 0 {
			all = append(all, fired{&rules[i], strength, ev})
		}
	}
	if len(all) == 0 {
		return Diagnosis{Cause: accelschema.CauseUndetermined, Evidence: regression,
			Action: "no signal explains it: compare the endpoint's traces (accelerator.hw.ids) with its device's series"}, true
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].strength > all[j].strength })
	d := Diagnosis{Cause: all[0].r.cause, Action: all[0].r.action, Evidence: regression + " " + strings.Join(all[0].evidence, " ")}
	for _, f := range all[1:] {
		d.Also = append(d.Also, f.r.cause)
	}
	return d, true
}
