package acceleratorremediationexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/guard"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/leader"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/sharedcomponent"
)

// DefaultPrefix is the node annotation and taint prefix.
const DefaultPrefix = accelschema.RemediationAnnotationPrefix

// exporters holds one instance per component ID, shared by the logs
// pipeline (health events: plans) and the metrics pipeline (the devices'
// recent readings for the incident bundle).
var exporters = sharedcomponent.NewMap[*remediationExporter]()

// NewFactory returns the accelerator_remediation exporter's factory.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(metadata.Type, createDefaultConfig,
		exporter.WithLogs(createLogs, metadata.LogsStability),
		exporter.WithMetrics(createMetrics, metadata.MetricsStability))
}

func shared(set exporter.Settings, cfg component.Config) (*sharedcomponent.Component[*remediationExporter], error) {
	return exporters.LoadOrStore(set.ID, func() (*remediationExporter, error) {
		return newExporter(cfg.(*Config), set)
	})
}

// The defaults are cautious: recommend mode, one node at a time, a tenth of
// an instance type, an hour's cooldown per node, six disruptive steps an
// hour (one plan's worth), approvals valid for an hour.
func createDefaultConfig() component.Config {
	esc := confighttp.NewDefaultClientConfig()
	esc.Timeout = 10 * time.Second
	return &Config{
		Mode:        engine.Recommend,
		ApprovalTTL: time.Hour,
		Prefix:      DefaultPrefix,
		Interval:    5 * time.Second,
		Retention:   24 * time.Hour,
		GuardRails: guard.Config{
			MaxNodes:                  1,
			MaxPercentPerInstanceType: 10,
			NodeCooldown:              time.Hour,
			ActionsPerHour:            6,
		},
		Retry:           RetryConfig{InitialInterval: 5 * time.Second, MaxInterval: 5 * time.Minute, MaxAttempts: 5},
		EvictionTimeout: 10 * time.Minute,
		Kubernetes:      KubernetesConfig{Enabled: true, APIConfig: k8sclient.APIConfig{AuthType: k8sclient.AuthServiceAccount}},
		LeaderElection: leader.Config{
			Enabled: true, Namespace: "otelcol-accel", LeaseName: "otelcol-accel-remediator",
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		},
		Escalation: EscalationConfig{ClientConfig: esc, MetricsWindow: 10 * time.Minute},
	}
}

type logsExporter struct {
	*sharedcomponent.Component[*remediationExporter]
}

func (logsExporter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (e logsExporter) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if e.Unwrap().unchecked(ctx, "logs", ld.LogRecordCount()) {
		return nil
	}
	e.Unwrap().intake(ld)
	return nil
}

type metricsExporter struct {
	*sharedcomponent.Component[*remediationExporter]
}

func (metricsExporter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (e metricsExporter) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	if e.Unwrap().unchecked(ctx, "metrics", md.DataPointCount()) {
		return nil
	}
	e.Unwrap().evidence.addMetrics(md)
	return nil
}

func createLogs(_ context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	return logsExporter{c}, nil
}

func createMetrics(_ context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
	c, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	return metricsExporter{c}, nil
}
