package acceleratorinsightsexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
)

func TestDefaultConfigIsValidAndLocal(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, cfg.Validate())
	require.Equal(t, "localhost:8686", cfg.NetAddr.Endpoint)
	require.Equal(t, BackendMemory, cfg.Backend)
}

// Each mistake is refused with the key and what to do.
func TestValidateNamesTheKey(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		says   string
	}{
		{"no endpoint", func(c *Config) { c.NetAddr.Endpoint = "" }, "endpoint: must be host:port"},
		{"endpoint without port", func(c *Config) { c.NetAddr.Endpoint = "localhost" }, `endpoint: "localhost" is not host:port`},
		{"cors", func(c *Config) { c.CORS = configoptional.Some(confighttp.CORSConfig{AllowedOrigins: []string{"*"}}) }, "cors: not supported"},
		{"backend", func(c *Config) { c.Backend = "influx" }, `backend: "influx" is not one of memory, prometheus`},
		{"prometheus without endpoint", func(c *Config) { c.Backend = BackendPrometheus }, "prometheus.endpoint: required with backend: prometheus"},
		{"prometheus endpoint scheme", func(c *Config) { c.Backend = BackendPrometheus; c.Prometheus.Endpoint = "prom:9090" }, "must start with http:// or https://"},
		{"step", func(c *Config) {
			c.Backend, c.Prometheus.Endpoint, c.Prometheus.Step = BackendPrometheus, "http://prom:9090", 0
		}, "prometheus.step: must be positive"},
		{"retention", func(c *Config) { c.Memory.Retention = 0 }, "memory.retention: must be positive"},
		{"points", func(c *Config) { c.Memory.PointsPerSeries = 1 }, "memory.points_per_series: must be 2..100000"},
		{"expiry", func(c *Config) { c.Memory.Expiry = -time.Second }, "memory.expiry: must be positive"},
		{"events", func(c *Config) { c.Logs.MaxEvents = 0 }, "logs.max_events: must be at least 1"},
		{"findings", func(c *Config) { c.Logs.MaxFindings = 0 }, "logs.max_findings: must be at least 1"},
		{"idle", func(c *Config) { c.IdleUtilization = 5 }, "idle_utilization: must be a ratio 0..1"},
		{"rate window", func(c *Config) { c.RateWindow = time.Millisecond }, "rate_window: must be at least 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			tc.change(cfg)
			err := cfg.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.says)
		})
	}
}

// A port already taken fails Start with the endpoint named.
func TestStartFailsOnATakenPort(t *testing.T) {
	first := startConsole(t, testConfig(), nil, "first")
	cfg := testConfig()
	cfg.NetAddr.Endpoint = first.e.Addr()
	f := NewFactory()
	e, err := newExporter(cfg, exporterSettings(t, f, "second"))
	require.NoError(t, err)
	err = e.Start(t.Context(), componenttest.NewNopHost())
	require.ErrorContains(t, err, first.e.Addr())
	require.ErrorContains(t, err, "cannot listen")
	require.NoError(t, e.Shutdown(t.Context()))
}
