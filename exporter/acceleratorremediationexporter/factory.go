package acceleratorremediationexporter

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/guard"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/leader"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
)

// DefaultPrefix is the node annotation and taint prefix.
const DefaultPrefix = "accelerator.otelcol-accel.io"

// NewFactory returns the accelerator_remediation exporter's factory.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(metadata.Type, createDefaultConfig,
		exporter.WithLogs(createLogs, metadata.LogsStability))
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

type logsExporter struct{ *remediationExporter }

func (logsExporter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (e logsExporter) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	e.intake(ld)
	return nil
}

func createLogs(_ context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	e, err := newExporter(cfg.(*Config), set)
	if err != nil {
		return nil, err
	}
	return logsExporter{e}, nil
}
