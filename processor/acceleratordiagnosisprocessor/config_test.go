package acceleratordiagnosisprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-accel/otelcol-accel/processor/acceleratordiagnosisprocessor/internal/metadata"
)

func TestDefaultConfigIsValid(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(createDefaultConfig()))
	require.NoError(t, createDefaultConfig().(*Config).Validate())
}

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, "demo").String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	assert.Equal(t, 30*time.Second, cfg.Window)
	assert.Equal(t, 6, cfg.Baselines.MinSamples)
	assert.Equal(t, "file_storage", cfg.Baselines.Storage.String())
	assert.Equal(t, 2.0, cfg.Rules.Ratio)
	assert.Equal(t, 100*time.Millisecond, cfg.Rules.MinTTFTIncrease)
	assert.Equal(t, 0.2, cfg.thresholds().Throttled, "untouched thresholds keep their defaults")
	assert.Equal(t, 3*time.Minute, cfg.Baselines.Warmup)
	assert.Equal(t, 2.0, cfg.Baselines.TrafficBand)
	assert.Equal(t, 10*time.Minute, cfg.Baselines.Settle, "untouched: the default")
	assert.Equal(t, 3, cfg.Rules.Sustain)
}

func TestValidateNamesWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Window = 0 }, "window must be positive"},
		{func(c *Config) { c.MinRequests = 0 }, "min_requests must be at least 1"},
		{func(c *Config) { c.MaxRunning = -1 }, "max_running must not be negative"},
		{func(c *Config) { c.Rules.Ratio = 1 }, "rules.ratio must be above 1"},
		{func(c *Config) { c.Rules.KVCacheHigh = 90 }, "rules.kv_cache_high is a fraction"},
		{func(c *Config) { c.StateTTL = time.Minute }, "state_ttl (1m0s) must be at least two windows"},
		{func(c *Config) { c.Baselines.MaxEndpoints = 0 }, "baselines.max_endpoints must be at least 1"},
		{func(c *Config) { c.Cooldown = -time.Second }, "cooldown must not be negative"},
		{func(c *Config) { c.Baselines.Warmup = -time.Minute }, "baselines.warmup (-1m0s) and baselines.settle (10m0s) must not be negative"},
		{func(c *Config) { c.Baselines.TrafficBand = 1 }, "baselines.traffic_band must be above 1"},
		{func(c *Config) { c.Baselines.TrafficWindows = 2 }, "baselines.traffic_windows must be at least 3"},
		{func(c *Config) { c.Rules.Deviations = -1 }, "rules.deviations must not be negative"},
		{func(c *Config) { c.Rules.Sustain = 0 }, "rules.sustain must be at least 1 window"},
		{func(c *Config) { c.Rules.MinTail = 0 }, "rules.min_tail must be at least 1 observation"},
	} {
		cfg := createDefaultConfig().(*Config)
		c.change(cfg)
		assert.ErrorContains(t, cfg.Validate(), c.want)
	}
}
