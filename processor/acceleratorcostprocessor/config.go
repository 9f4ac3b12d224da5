package acceleratorcostprocessor

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
)

// nodeLabelPrefix is the semantic-convention form of a Kubernetes node label
// as a resource attribute (k8s.node.label.<key>), which is how an attributes
// processor that copies node labels names them.
const nodeLabelPrefix = "k8s.node.label."

// Config of the accelerator_cost processor. Every threshold is documented
// with its default and its formula in docs/cost-model.md.
type Config struct {
	Pricing PricingConfig `mapstructure:"pricing"`

	// HostTypeAttributes are the resource attributes tried, in order, for
	// the instance type of the pricing join.
	HostTypeAttributes []string `mapstructure:"host_type_attributes"`
	// RegionAttributes are tried, in order, for the region; without one the
	// table's default region is used.
	RegionAttributes []string `mapstructure:"region_attributes"`

	// MonthlyHours turns an hourly saving into a monthly one.
	MonthlyHours float64 `mapstructure:"monthly_hours"`
	// MaxInterval caps the time one pair of data points accrues: a resource
	// that was not seen for longer (collector restart, scrape failures) is
	// charged for MaxInterval, not for the whole gap.
	MaxInterval time.Duration `mapstructure:"max_interval"`
	// StateTTL forgets a device, pod or workload not seen for this long
	// (wall-clock time); its cumulative series start again if it returns.
	StateTTL time.Duration `mapstructure:"state_ttl"`

	Waste     WasteConfig     `mapstructure:"waste"`
	Findings  FindingsConfig  `mapstructure:"findings"`
	Baselines BaselinesConfig `mapstructure:"baselines"`
	Health    HealthConfig    `mapstructure:"health"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// PricingConfig selects the price tables.
type PricingConfig struct {
	// Files are CSV or YAML tables applied in order over the bundled table.
	Files []string `mapstructure:"files"`
	// ReloadInterval is how often the files are checked for new content;
	// 0 turns reloading off.
	ReloadInterval time.Duration `mapstructure:"reload_interval"`
	// DefaultRegion is the region of rows that name none and the region a
	// lookup falls back to.
	DefaultRegion string `mapstructure:"default_region"`
	// PriceFactor multiplies every price (a fleet-wide savings plan: 0.72).
	PriceFactor float64 `mapstructure:"price_factor"`
	// DisableBundled leaves the bundled AWS on-demand table out.
	DisableBundled bool `mapstructure:"disable_bundled"`
}

// WasteConfig holds the thresholds of the waste reasons.
type WasteConfig struct {
	// IdleActivity: an allocated resource whose activity is below this in an
	// interval wastes that interval ("idle").
	IdleActivity float64 `mapstructure:"idle_activity"`
	// Headroom is added to peaks before asking whether something smaller
	// would fit (0.2 = 20 % spare).
	Headroom float64 `mapstructure:"headroom"`
	// MemoryOverprovisionedBelow: memory is overprovisioned when the window's
	// peak use, with headroom, stays below this fraction of the resource's
	// memory.
	MemoryOverprovisionedBelow float64 `mapstructure:"memory_overprovisioned_below"`
	// TrainingTolerance: a training interval is inefficient when its tensor
	// (else SM) activity is below baseline × (1 − tolerance).
	TrainingTolerance float64 `mapstructure:"training_tolerance"`
	// InferenceMaxActivity, InferenceMaxKVCache: a serving resource with an
	// empty queue below both is under-utilized.
	InferenceMaxActivity float64 `mapstructure:"inference_max_activity"`
	InferenceMaxKVCache  float64 `mapstructure:"inference_max_kv_cache"`
	// InferenceTargetUtilization is the load a right-sized serving fleet
	// runs at; the under-utilized share is 1 − load / target.
	InferenceTargetUtilization float64 `mapstructure:"inference_target_utilization"`
}

// FindingsConfig controls when findings are raised.
type FindingsConfig struct {
	// Window is the span of data (by data point timestamps) a finding looks
	// at: peaks for rightsizing, averages for training, the queue for
	// inference.
	Window time.Duration `mapstructure:"window"`
	// MinCoverage is the fraction of the window a resource must have been
	// observed before a finding about it is raised.
	MinCoverage float64 `mapstructure:"min_coverage"`
	// Cooldown: a finding of one kind about one resource is raised at most
	// once per cooldown.
	Cooldown time.Duration `mapstructure:"cooldown"`
	// MinMonthlySaving drops findings that would save less than this (USD).
	MinMonthlySaving float64 `mapstructure:"min_monthly_saving"`
}

// BaselinesConfig controls the training-efficiency baselines.
type BaselinesConfig struct {
	// Storage is the ID of a storage extension (file_storage) that keeps
	// baselines across restarts. Without it they live in memory only.
	Storage *component.ID `mapstructure:"storage"`
	// HalfLife of the exponentially weighted baseline, in data time.
	HalfLife time.Duration `mapstructure:"half_life"`
	// MinSamples before a baseline is trusted.
	MinSamples int `mapstructure:"min_samples"`
	// TTL forgets a baseline not updated for this long.
	TTL time.Duration `mapstructure:"ttl"`
	// SaveInterval between writes to the storage extension (and on shutdown).
	SaveInterval time.Duration `mapstructure:"save_interval"`
	// MaxEntries bounds the number of baselines kept; the stalest go first.
	MaxEntries int `mapstructure:"max_entries"`
}

// HealthConfig controls how health events mark devices unavailable.
type HealthConfig struct {
	// Hold: a health event with hw.state=failed makes its device unavailable
	// for this long after the event (data time). A device that keeps failing
	// keeps sending events, or reports hw.status=failed, which counts for as
	// long as it is reported.
	Hold time.Duration `mapstructure:"hold"`
}

func createDefaultConfig() component.Config {
	return &Config{
		Pricing: PricingConfig{
			ReloadInterval: time.Minute,
			DefaultRegion:  pricing.DefaultRegion,
			PriceFactor:    1,
		},
		HostTypeAttributes: []string{
			accelschema.AttrHostType,
			nodeLabelPrefix + "node.kubernetes.io/instance-type",
			nodeLabelPrefix + "beta.kubernetes.io/instance-type",
		},
		RegionAttributes: []string{
			accelschema.AttrCloudRegion,
			nodeLabelPrefix + "topology.kubernetes.io/region",
			nodeLabelPrefix + "failure-domain.beta.kubernetes.io/region",
		},
		MonthlyHours: 730,
		MaxInterval:  5 * time.Minute,
		StateTTL:     15 * time.Minute,
		Waste: WasteConfig{
			IdleActivity:               0.05,
			Headroom:                   0.2,
			MemoryOverprovisionedBelow: 0.5,
			TrainingTolerance:          0.2,
			InferenceMaxActivity:       0.3,
			InferenceMaxKVCache:        0.3,
			InferenceTargetUtilization: 0.6,
		},
		Findings: FindingsConfig{
			Window:           time.Hour,
			MinCoverage:      0.8,
			Cooldown:         24 * time.Hour,
			MinMonthlySaving: 1,
		},
		Baselines: BaselinesConfig{
			HalfLife:     24 * time.Hour,
			MinSamples:   60,
			TTL:          30 * 24 * time.Hour,
			SaveInterval: 5 * time.Minute,
			MaxEntries:   10000,
		},
		Health: HealthConfig{Hold: 15 * time.Minute},
	}
}

// Validate fails fast on settings that cannot work. It checks their shape
// only and reads no file: the pricing files are read by Start, which fails
// on a malformed table with the file and line of the problem.
func (c *Config) Validate() error {
	var errs []error
	ratio := func(name string, v float64, allowZero bool) {
		if v < 0 || v > 1 || (!allowZero && v == 0) {
			errs = append(errs, fmt.Errorf("%s: %v must be between 0 and 1", name, v))
		}
	}
	positive := func(name string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be a positive duration, got %v", name, d))
		}
	}
	if c.Pricing.ReloadInterval < 0 {
		errs = append(errs, fmt.Errorf("pricing.reload_interval: %v is negative (0 turns reloading off)", c.Pricing.ReloadInterval))
	}
	for i, f := range c.Pricing.Files {
		if strings.TrimSpace(f) == "" {
			errs = append(errs, fmt.Errorf("pricing.files[%d]: the path is empty", i))
		}
	}
	if c.Pricing.DisableBundled && len(c.Pricing.Files) == 0 {
		errs = append(errs, fmt.Errorf("pricing: %w", pricing.ErrNoFiles))
	}
	if c.Pricing.PriceFactor <= 0 || c.Pricing.PriceFactor > 10 {
		errs = append(errs, fmt.Errorf("pricing.price_factor: %v must be in (0, 10]; 0.72 means 28%% below the listed prices", c.Pricing.PriceFactor))
	}
	if len(c.HostTypeAttributes) == 0 {
		errs = append(errs, errors.New("host_type_attributes: list at least one attribute (host.type)"))
	}
	if c.MonthlyHours <= 0 || c.MonthlyHours > 744 {
		errs = append(errs, fmt.Errorf("monthly_hours: %v must be in (0, 744]", c.MonthlyHours))
	}
	positive("max_interval", c.MaxInterval)
	positive("state_ttl", c.StateTTL)
	ratio("waste.idle_activity", c.Waste.IdleActivity, true)
	if c.Waste.Headroom < 0 || c.Waste.Headroom > 4 {
		errs = append(errs, fmt.Errorf("waste.headroom: %v must be between 0 and 4 (0.2 = 20%% spare)", c.Waste.Headroom))
	}
	ratio("waste.memory_overprovisioned_below", c.Waste.MemoryOverprovisionedBelow, true)
	ratio("waste.training_tolerance", c.Waste.TrainingTolerance, true)
	ratio("waste.inference_max_activity", c.Waste.InferenceMaxActivity, true)
	ratio("waste.inference_max_kv_cache", c.Waste.InferenceMaxKVCache, true)
	ratio("waste.inference_target_utilization", c.Waste.InferenceTargetUtilization, false)
	positive("findings.window", c.Findings.Window)
	ratio("findings.min_coverage", c.Findings.MinCoverage, true)
	if c.Findings.Cooldown < 0 {
		errs = append(errs, fmt.Errorf("findings.cooldown: %v is negative", c.Findings.Cooldown))
	}
	if c.Findings.MinMonthlySaving < 0 {
		errs = append(errs, fmt.Errorf("findings.min_monthly_saving: %v is negative", c.Findings.MinMonthlySaving))
	}
	positive("baselines.half_life", c.Baselines.HalfLife)
	positive("baselines.ttl", c.Baselines.TTL)
	positive("baselines.save_interval", c.Baselines.SaveInterval)
	if c.Baselines.MinSamples < 1 {
		errs = append(errs, fmt.Errorf("baselines.min_samples: %d must be at least 1", c.Baselines.MinSamples))
	}
	if c.Baselines.MaxEntries < 1 {
		errs = append(errs, fmt.Errorf("baselines.max_entries: %d must be at least 1", c.Baselines.MaxEntries))
	}
	positive("health.hold", c.Health.Hold)
	return errors.Join(errs...)
}

func (c *Config) pricingOptions() pricing.Options {
	return pricing.Options{
		DefaultRegion:  c.Pricing.DefaultRegion,
		PriceFactor:    c.Pricing.PriceFactor,
		WithoutBundled: c.Pricing.DisableBundled,
	}
}
