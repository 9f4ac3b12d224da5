package acceleratorinsightsexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/internal/sharedcomponent"
)

// Defaults.
const (
	// defaultEndpoint keeps the console on this machine unless configured:
	// 8686 is free of the gateway's other ports (4317/4318 OTLP, 8888
	// telemetry, 8889 prometheus, 13133 health, 1777 pprof, 55679 zpages).
	defaultEndpoint        = "localhost:8686"
	defaultRetention       = time.Hour
	defaultPointsPerSeries = 120
	defaultExpiry          = 10 * time.Minute
	defaultMaxEvents       = 10_000
	defaultMaxFindings     = 10_000
	defaultDecisionKeep    = 30 * 24 * time.Hour
	defaultIdle            = 0.05
	defaultRateWindow      = 5 * time.Minute
	defaultStep            = 30 * time.Second
	defaultQueryTimeout    = 10 * time.Second
)

// exporters holds one instance per component ID, shared by the metrics and
// logs pipelines: one model, one server.
var exporters = sharedcomponent.NewMap[*insightsExporter]()

// NewFactory returns the accelerator_insights exporter's factory.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithMetrics(createMetrics, metadata.MetricsStability),
		exporter.WithLogs(createLogs, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	server := confighttp.NewDefaultServerConfig()
	server.NetAddr.Endpoint = defaultEndpoint
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = defaultQueryTimeout
	return &Config{
		ServerConfig:    server,
		Backend:         BackendMemory,
		Memory:          MemoryConfig{Retention: defaultRetention, PointsPerSeries: defaultPointsPerSeries, Expiry: defaultExpiry},
		Prometheus:      PrometheusConfig{ClientConfig: client, Step: defaultStep},
		Logs:            LogsConfig{MaxEvents: defaultMaxEvents, MaxFindings: defaultMaxFindings, DecisionRetention: defaultDecisionKeep},
		IdleUtilization: defaultIdle,
		RateWindow:      defaultRateWindow,
	}
}

func shared(set exporter.Settings, cfg component.Config) (*sharedcomponent.Component[*insightsExporter], error) {
	return exporters.LoadOrStore(set.ID, func() (*insightsExporter, error) {
		return newExporter(cfg.(*Config), set)
	})
}

// metricsExporter and logsExporter are the pipelines' handles on the
// shared instance.
type metricsExporter struct {
	*sharedcomponent.Component[*insightsExporter]
}

func (e metricsExporter) ConsumeMetrics(_ context.Context, md pmetric.Metrics) error {
	e.Unwrap().consumeMetrics(md)
	return nil
}

func (metricsExporter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

type logsExporter struct {
	*sharedcomponent.Component[*insightsExporter]
}

func (e logsExporter) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	e.Unwrap().consumeLogs(ld)
	return nil
}

func (logsExporter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func createMetrics(_ context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
	c, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	return metricsExporter{c}, nil
}

func createLogs(_ context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	return logsExporter{c}, nil
}
