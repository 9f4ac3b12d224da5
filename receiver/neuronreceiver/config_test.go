package neuronreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	custom := createDefaultConfig()
	custom.Command = "/opt/aws/neuron/bin/neuron-monitor"
	custom.Args = []string{"--verbose", "1"}
	custom.Period = 10 * time.Second
	custom.MetricGroups = []string{groupNeuronCoreCounters, groupMemoryUsed, groupHWCounters}
	custom.TagFilter = "^vllm-.*"
	custom.RestartBackoff = BackoffConfig{InitialInterval: 2 * time.Second, MaxInterval: 2 * time.Minute}
	custom.ShutdownGracePeriod = 3 * time.Second
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"enabled": false}).Unmarshal(&custom.Metrics.AcceleratorFlops))

	file := createDefaultConfig()
	file.Input = InputFile
	file.Path = "/var/run/neuron-monitor/monitor.fifo"

	daemonset := createDefaultConfig()
	daemonset.Input = InputPrometheus
	daemonset.Endpoint = "http://localhost:8000/metrics"
	daemonset.CollectionInterval = 15 * time.Second
	daemonset.Timeout = 3 * time.Second

	for name, want := range map[string]*Config{"": createDefaultConfig(), "custom": custom, "file": file, "daemonset": daemonset} {
		t.Run(name, func(t *testing.T) {
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
			require.NoError(t, err)
			cfg := NewFactory().CreateDefaultConfig()
			require.NoError(t, sub.Unmarshal(cfg))
			require.NoError(t, confmap.Validate(cfg))
			assert.Equal(t, want, cfg)
		})
	}
}

func TestValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*Config)
		want string
	}{
		"unknown input":          {func(c *Config) { c.Input = "socket" }, `input: must be one of "subprocess", "file", "prometheus", got "socket"`},
		"no command":             {func(c *Config) { c.Command = " " }, "command: must name neuron-monitor"},
		"path in subprocess":     {func(c *Config) { c.Path = "/tmp/x" }, "path: is read only with input: file"},
		"file without path":      {func(c *Config) { c.Input = InputFile }, "path: required with input: file"},
		"args with file":         {func(c *Config) { c.Input, c.Path, c.Args = InputFile, "/x", []string{"-v"} }, "args: are passed to neuron-monitor only with input: subprocess"},
		"no endpoint":            {func(c *Config) { c.Input = InputPrometheus }, "endpoint: required with input: prometheus (neuron-monitor-prometheus.py's metrics URL, e.g. http://localhost:8000/metrics)"},
		"endpoint not a URL":     {func(c *Config) { c.Input, c.Endpoint = InputPrometheus, "localhost:8000" }, `endpoint: "localhost:8000" must start with http:// or https://`},
		"endpoint no host":       {func(c *Config) { c.Input, c.Endpoint = InputPrometheus, "http:///metrics" }, `endpoint: "http:///metrics" has no host`},
		"no interval":            {func(c *Config) { c.Input, c.Endpoint, c.CollectionInterval = InputPrometheus, "http://x:8000", 0 }, "collection_interval: must be positive, got 0s"},
		"endpoint in subprocess": {func(c *Config) { c.Endpoint = "http://x:8000" }, "endpoint: is read only with input: prometheus"},
		"path in prometheus":     {func(c *Config) { c.Input, c.Endpoint, c.Path = InputPrometheus, "http://x:8000", "/x" }, "path: is read only with input: file"},
		"args in prometheus":     {func(c *Config) { c.Input, c.Endpoint, c.Args = InputPrometheus, "http://x:8000", []string{"-v"} }, "args: are passed to neuron-monitor only with input: subprocess"},
		"sub-second period":      {func(c *Config) { c.Period = 1500 * time.Millisecond }, "period: must be a whole number of seconds, at least 1s (neuron-monitor's config takes seconds), got 1.5s"},
		"no groups":              {func(c *Config) { c.MetricGroups = nil }, "metric_groups: must list at least one of"},
		"unknown group":          {func(c *Config) { c.MetricGroups = []string{"vcpu_usage"} }, `metric_groups: "vcpu_usage" is not a group this receiver maps`},
		"duplicate group":        {func(c *Config) { c.MetricGroups = []string{"memory_used", "memory_used"} }, `metric_groups: "memory_used" is listed twice`},
		"bad tag filter":         {func(c *Config) { c.TagFilter = "(" }, "tag_filter: not a regular expression"},
		"zero backoff":           {func(c *Config) { c.RestartBackoff.InitialInterval = 0 }, "restart_backoff::initial_interval: must be positive"},
		"max below initial":      {func(c *Config) { c.RestartBackoff.MaxInterval = time.Millisecond }, "restart_backoff::max_interval: must be at least initial_interval (1s), got 1ms"},
		"no grace":               {func(c *Config) { c.ShutdownGracePeriod = 0 }, "shutdown_grace_period: must be positive"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := createDefaultConfig()
			tc.edit(cfg)
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	require.NoError(t, createDefaultConfig().Validate())
}

func TestMonitorConfigFollowsTheReceiverConfig(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Period = 2 * time.Minute
	cfg.MetricGroups = []string{groupHWCounters, groupExecutionStats}
	cfg.TagFilter = "^train"
	assert.Equal(t, monitorConfig{
		Period:         "120s",
		NeuronRuntimes: []runtimeSelector{{TagFilter: "^train", Metrics: []metricGroup{{groupExecutionStats}}}},
		SystemMetrics:  []metricGroup{{groupHWCounters}},
	}, cfg.monitorConfig())

	cfg.MetricGroups = []string{groupHWCounters}
	assert.Empty(t, cfg.monitorConfig().NeuronRuntimes, "no runtime groups, no runtime section")
}
