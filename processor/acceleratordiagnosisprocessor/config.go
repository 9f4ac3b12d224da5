package acceleratordiagnosisprocessor

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-accel/otelcol-accel/internal/latencydiagnosis"
)

// Config of the accelerator_diagnosis processor. The rules' thresholds and
// their meaning are in internal/latencydiagnosis (DefaultThresholds).
type Config struct {
	// Window is the length of the windows an endpoint's latencies are
	// judged over, aligned on multiples of it in data time. A window is
	// judged when the endpoint's first data point of a later window
	// arrives.
	Window time.Duration `mapstructure:"window"`
	// MinRequests is how many finished requests a window's TTFT (and
	// tokens its ITL) must hold to be judged or to count in the baseline:
	// a p95 of a handful of requests is noise.
	MinRequests int `mapstructure:"min_requests"`
	// Recent is how long an XID or ECC event, a cold start or a scale-up
	// counts as evidence after it happened.
	Recent time.Duration `mapstructure:"recent"`
	// Cooldown is the least time between two findings of one endpoint with
	// the same cause.
	Cooldown time.Duration `mapstructure:"cooldown"`
	// MaxRunning is the servers' concurrency limit (vLLM --max-num-seqs,
	// SGLang --max-running-requests) for the queueing rule; the servers do
	// not export it. 0 turns the queueing rule off.
	MaxRunning int `mapstructure:"max_running"`
	// StateTTL forgets an endpoint, pod or device not seen for this long.
	StateTTL time.Duration `mapstructure:"state_ttl"`

	Baselines BaselinesConfig `mapstructure:"baselines"`
	Rules     RulesConfig     `mapstructure:"rules"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// BaselinesConfig is how an endpoint's normal is kept.
type BaselinesConfig struct {
	// Storage is a storage extension (file_storage) the baselines are saved
	// to, so that a restart keeps them. Without one they live in memory.
	Storage *component.ID `mapstructure:"storage"`
	// HalfLife of the exponentially weighted baseline, in data time.
	HalfLife time.Duration `mapstructure:"half_life"`
	// MinSamples windows make a baseline that is compared with.
	MinSamples int `mapstructure:"min_samples"`
	// TTL forgets the baseline of an endpoint not seen for this long.
	TTL time.Duration `mapstructure:"ttl"`
	// MaxEndpoints caps the baselines held (the stalest go first).
	MaxEndpoints int `mapstructure:"max_endpoints"`
	// SaveInterval is how often changed baselines are written.
	SaveInterval time.Duration `mapstructure:"save_interval"`

	// A baseline is learned from steady traffic only (README, "What a
	// baseline learns from"). Warmup: an endpoint's windows in its first
	// warmup of data time after this processor first sees it (a server
	// starting, a new endpoint, the collector's own start) are neither
	// learned from nor judged.
	Warmup time.Duration `mapstructure:"warmup"`
	// Settle: windows within settle after the endpoint's replicas change
	// (a pod appears or goes, a cold start, a scaling event) are judged
	// (the cold_replica rule explains them) but not learned from.
	Settle time.Duration `mapstructure:"settle"`
	// TrafficBand: a window whose request rate is more than this factor
	// above or below the endpoint's typical rate (the median of its last
	// traffic_windows windows) is a change of traffic, not of the
	// endpoint: it is neither learned from nor judged.
	TrafficBand    float64 `mapstructure:"traffic_band"`
	TrafficWindows int     `mapstructure:"traffic_windows"`
}

// RulesConfig are the regression test's and the rules' thresholds.
type RulesConfig struct {
	Ratio           float64       `mapstructure:"ratio"`
	MinTTFTIncrease time.Duration `mapstructure:"min_ttft_increase"`
	MinITLIncrease  time.Duration `mapstructure:"min_itl_increase"`
	// Deviations: a regression also lies above the baseline by more than
	// this many of the baseline's spreads (the standard deviation of its
	// windows' p95), so an endpoint whose normal swings is judged against
	// its swing.
	Deviations float64 `mapstructure:"deviations"`
	// Sustain is how many judged windows in a row must regress before a
	// finding: one window at the edge of a burst is not a regression.
	Sustain int `mapstructure:"sustain"`
	// MinTail is how many observations a window's p95 must rest on (5 % of
	// its TTFT requests, of its ITL tokens): a p95 of 28 requests is the
	// second slowest, noise. A signal with fewer is not judged.
	MinTail         int     `mapstructure:"min_tail"`
	KVCacheHigh     float64 `mapstructure:"kv_cache_high"`
	KVCacheFull     float64 `mapstructure:"kv_cache_full"`
	QueueAtLimit    float64 `mapstructure:"queue_at_limit"`
	SMSaturated     float64 `mapstructure:"sm_saturated"`
	TensorSaturated float64 `mapstructure:"tensor_saturated"`
	Throttled       float64 `mapstructure:"throttled"`
	NoisyNeighbour  float64 `mapstructure:"noisy_neighbour"`
}

func createDefaultConfig() component.Config {
	d := latencydiagnosis.DefaultThresholds
	return &Config{
		Window:      time.Minute,
		MinRequests: 20,
		Recent:      10 * time.Minute,
		Cooldown:    15 * time.Minute,
		MaxRunning:  256, // vLLM's default --max-num-seqs
		StateTTL:    30 * time.Minute,
		Baselines: BaselinesConfig{
			HalfLife:     6 * time.Hour,
			MinSamples:   d.MinSamples,
			TTL:          7 * 24 * time.Hour,
			MaxEndpoints: 10000,
			SaveInterval: time.Minute,
			Warmup:       10 * time.Minute,
			Settle:       10 * time.Minute,
			TrafficBand:  1.5,
			// Fifteen windows: the typical rate is what most of the last
			// quarter hour showed, so bursts shorter than half of it are
			// the exception, not the norm.
			TrafficWindows: 15,
		},
		Rules: RulesConfig{
			Ratio:           d.Ratio,
			MinTTFTIncrease: time.Duration(d.MinTTFT * float64(time.Second)),
			MinITLIncrease:  time.Duration(d.MinITL * float64(time.Second)),
			Deviations:      d.Deviations,
			Sustain:         2,
			MinTail:         5,
			KVCacheHigh:     d.KVCacheHigh,
			KVCacheFull:     d.KVCacheFull,
			QueueAtLimit:    d.QueueAtLimit,
			SMSaturated:     d.SMSaturated,
			TensorSaturated: d.TensorSaturated,
			Throttled:       d.Throttled,
			NoisyNeighbour:  d.NoisyNeighbour,
		},
	}
}

// thresholds are the rules' thresholds of this configuration.
func (c *Config) thresholds() latencydiagnosis.Thresholds {
	r := c.Rules
	return latencydiagnosis.Thresholds{
		Ratio: r.Ratio, MinTTFT: r.MinTTFTIncrease.Seconds(), MinITL: r.MinITLIncrease.Seconds(), Deviations: r.Deviations,
		MinSamples:  c.Baselines.MinSamples,
		KVCacheHigh: r.KVCacheHigh, KVCacheFull: r.KVCacheFull, QueueAtLimit: r.QueueAtLimit,
		SMSaturated: r.SMSaturated, TensorSaturated: r.TensorSaturated, Throttled: r.Throttled,
		NoisyNeighbour: r.NoisyNeighbour,
	}
}

// Validate fails at startup on a configuration that could not work.
func (c *Config) Validate() error {
	var errs []error
	positive := func(name string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", name, d))
		}
	}
	positive("window", c.Window)
	positive("recent", c.Recent)
	positive("state_ttl", c.StateTTL)
	positive("baselines.half_life", c.Baselines.HalfLife)
	positive("baselines.ttl", c.Baselines.TTL)
	positive("baselines.save_interval", c.Baselines.SaveInterval)
	if c.Cooldown < 0 {
		errs = append(errs, fmt.Errorf("cooldown must not be negative, got %s", c.Cooldown))
	}
	if c.MinRequests < 1 {
		errs = append(errs, fmt.Errorf("min_requests must be at least 1, got %d", c.MinRequests))
	}
	if c.MaxRunning < 0 {
		errs = append(errs, fmt.Errorf("max_running must not be negative (0 turns the queueing rule off), got %d", c.MaxRunning))
	}
	if c.Baselines.MinSamples < 1 {
		errs = append(errs, fmt.Errorf("baselines.min_samples must be at least 1, got %d", c.Baselines.MinSamples))
	}
	if c.Baselines.MaxEndpoints < 1 {
		errs = append(errs, fmt.Errorf("baselines.max_endpoints must be at least 1, got %d", c.Baselines.MaxEndpoints))
	}
	b := c.Baselines
	if b.Warmup < 0 || b.Settle < 0 {
		errs = append(errs, fmt.Errorf("baselines.warmup (%s) and baselines.settle (%s) must not be negative", b.Warmup, b.Settle))
	}
	if !(b.TrafficBand > 1) {
		errs = append(errs, fmt.Errorf("baselines.traffic_band must be above 1 (a factor of the typical request rate), got %g", b.TrafficBand))
	}
	if b.TrafficWindows < 3 {
		errs = append(errs, fmt.Errorf("baselines.traffic_windows must be at least 3 (the typical rate is their median), got %d", b.TrafficWindows))
	}
	if c.Rules.Deviations < 0 {
		errs = append(errs, fmt.Errorf("rules.deviations must not be negative, got %g", c.Rules.Deviations))
	}
	if c.Rules.MinTail < 1 {
		errs = append(errs, fmt.Errorf("rules.min_tail must be at least 1 observation, got %d", c.Rules.MinTail))
	}
	if c.Rules.Sustain < 1 {
		errs = append(errs, fmt.Errorf("rules.sustain must be at least 1 window, got %d", c.Rules.Sustain))
	}
	if c.StateTTL > 0 && c.Window > 0 && c.StateTTL < 2*c.Window {
		errs = append(errs, fmt.Errorf("state_ttl (%s) must be at least two windows (%s): an endpoint would be forgotten before its window is judged", c.StateTTL, 2*c.Window))
	}
	r := c.Rules
	if r.Ratio <= 1 {
		errs = append(errs, fmt.Errorf("rules.ratio must be above 1 (a regression is a rise), got %g", r.Ratio))
	}
	if r.MinTTFTIncrease < 0 || r.MinITLIncrease < 0 {
		errs = append(errs, errors.New("rules.min_ttft_increase and rules.min_itl_increase must not be negative"))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"kv_cache_high", r.KVCacheHigh}, {"kv_cache_full", r.KVCacheFull}, {"queue_at_limit", r.QueueAtLimit},
		{"sm_saturated", r.SMSaturated}, {"tensor_saturated", r.TensorSaturated}, {"throttled", r.Throttled},
		{"noisy_neighbour", r.NoisyNeighbour},
	} {
		if f.v <= 0 || f.v > 1 {
			errs = append(errs, fmt.Errorf("rules.%s is a fraction in (0, 1], got %g", f.name, f.v))
		}
	}
	return errors.Join(errs...)
}
