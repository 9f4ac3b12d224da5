package acceleratorcostprocessor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	storageID := component.MustNewIDWithName("file_storage", "baselines")
	custom := createDefaultConfig().(*Config)
	custom.Pricing = PricingConfig{Files: []string{"testdata/prices.csv"}, ReloadInterval: 30 * time.Second, DefaultRegion: "eu-west-1", PriceFactor: 0.72}
	custom.HostTypeAttributes = []string{"host.type", "k8s.node.label.node.kubernetes.io/instance-type"}
	custom.RegionAttributes = []string{"cloud.region"}
	custom.MonthlyHours = 720
	custom.MaxInterval = 2 * time.Minute
	custom.StateTTL = 30 * time.Minute
	custom.Waste = WasteConfig{IdleActivity: 0.1, Headroom: 0.3, MemoryOverprovisionedBelow: 0.4, TrainingTolerance: 0.15,
		InferenceMaxActivity: 0.25, InferenceMaxKVCache: 0.35, InferenceTargetUtilization: 0.7}
	custom.Findings = FindingsConfig{Window: 6 * time.Hour, MinCoverage: 0.9, Cooldown: 72 * time.Hour, MinMonthlySaving: 25}
	custom.Baselines = BaselinesConfig{Storage: &storageID, HalfLife: 48 * time.Hour, MinSamples: 120, TTL: 1440 * time.Hour, SaveInterval: time.Minute, MaxEntries: 500}
	custom.Health = HealthConfig{Hold: 30 * time.Minute}

	tests := []struct {
		id   component.ID
		want component.Config
		// wantStartErr: the config is valid in shape, and Start, which
		// reads the pricing files, fails.
		wantStartErr string
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig()},
		{id: component.NewIDWithName(metadata.Type, "custom"), want: custom},
		{id: component.NewIDWithName(metadata.Type, "bad_pricing"), wantStartErr: "testdata/bad_prices.csv:3: price_per_hour \"-8\" is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			require.NoError(t, confmap.Validate(cfg))
			if tt.wantStartErr != "" {
				p := newCostProcessor(processortest.NewNopSettings(metadata.Type), cfg.(*Config))
				require.ErrorContains(t, p.Start(context.Background(), componenttest.NewNopHost()), tt.wantStartErr)
				return
			}
			require.Equal(t, tt.want, cfg)
		})
	}
}

func TestValidateNamesTheSetting(t *testing.T) {
	tests := []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.Pricing.PriceFactor = 0 }, "pricing.price_factor: 0 must be in (0, 10]"},
		{func(c *Config) { c.Pricing.ReloadInterval = -time.Second }, "pricing.reload_interval: -1s is negative"},
		{func(c *Config) { c.Pricing.Files = []string{"testdata/prices.csv", " "} }, "pricing.files[1]: the path is empty"},
		{func(c *Config) { c.Pricing.DisableBundled = true }, "no price rows: the bundled table is disabled and pricing.files is empty"},
		{func(c *Config) { c.HostTypeAttributes = nil }, "host_type_attributes: list at least one attribute"},
		{func(c *Config) { c.MonthlyHours = 0 }, "monthly_hours: 0 must be in (0, 744]"},
		{func(c *Config) { c.MaxInterval = 0 }, "max_interval: must be a positive duration"},
		{func(c *Config) { c.StateTTL = 0 }, "state_ttl: must be a positive duration"},
		{func(c *Config) { c.Waste.IdleActivity = 5 }, "waste.idle_activity: 5 must be between 0 and 1"},
		{func(c *Config) { c.Waste.Headroom = -0.1 }, "waste.headroom: -0.1 must be between 0 and 4"},
		{func(c *Config) { c.Waste.InferenceTargetUtilization = 0 }, "waste.inference_target_utilization: 0 must be between 0 and 1"},
		{func(c *Config) { c.Findings.Window = 0 }, "findings.window: must be a positive duration"},
		{func(c *Config) { c.Findings.MinCoverage = 1.5 }, "findings.min_coverage: 1.5 must be between 0 and 1"},
		{func(c *Config) { c.Findings.Cooldown = -time.Hour }, "findings.cooldown: -1h0m0s is negative"},
		{func(c *Config) { c.Findings.MinMonthlySaving = -1 }, "findings.min_monthly_saving: -1 is negative"},
		{func(c *Config) { c.Baselines.MinSamples = 0 }, "baselines.min_samples: 0 must be at least 1"},
		{func(c *Config) { c.Baselines.MaxEntries = 0 }, "baselines.max_entries: 0 must be at least 1"},
		{func(c *Config) { c.Baselines.SaveInterval = 0 }, "baselines.save_interval: must be a positive duration"},
		{func(c *Config) { c.Health.Hold = 0 }, "health.hold: must be a positive duration"},
	}
	for _, tt := range tests {
		cfg := createDefaultConfig().(*Config)
		tt.mutate(cfg)
		require.ErrorContains(t, cfg.Validate(), tt.want)
	}
	require.NoError(t, createDefaultConfig().(*Config).Validate())
}

// Validate reads no file; Start does, and names the file that is missing.
func TestStartReadsThePricingFiles(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Pricing.Files = []string{"testdata/missing.csv"}
	require.NoError(t, cfg.Validate())
	p := newCostProcessor(processortest.NewNopSettings(metadata.Type), cfg)
	require.ErrorContains(t, p.Start(context.Background(), componenttest.NewNopHost()),
		"pricing: testdata/missing.csv: cannot read the pricing file")
}
