package emfexporter // import "github.com/otelcol-accel/otelcol-accel/exporter/emfexporter"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/delta"
	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/metadata"
	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Defaults.
const (
	defaultNamespace           = "OtelcolAccel"
	defaultLogGroupName        = "/otelcol-accel/metrics"
	defaultLogStreamName       = "{" + as.AttrHostName + "}"
	defaultPlaceholderFallback = "unknown"
	defaultStateTTL            = 15 * time.Minute
	defaultTimeout             = 30 * time.Second
)

// NewFactory creates the factory of the cloudwatch_emf exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithMetrics(createMetrics, metadata.MetricsStability),
		exporter.WithLogs(createLogs, metadata.LogsStability),
	)
}

// defaultDimensions are the short CloudWatch names of this project's
// resource attributes (docs/metrics.md). A node is a Kubernetes node, or the
// host outside Kubernetes.
func defaultDimensions() []DimensionConfig {
	return []DimensionConfig{
		{Name: "Cluster", Attributes: []string{as.AttrK8sClusterName}},
		{Name: "Node", Attributes: []string{as.AttrK8sNodeName, as.AttrHostName}},
		{Name: "Team", Attributes: []string{as.AttrTeam}},
		{Name: "Namespace", Attributes: []string{as.AttrK8sNamespaceName}},
		{Name: "Workload", Attributes: []string{as.AttrWorkloadName}},
		{Name: "Device", Attributes: []string{as.AttrHWID}},
		{Name: "Partition", Attributes: []string{as.AttrPartitionID}},
	}
}

// defaultDimensionSets answer the fleet questions: per cluster, per team, per
// workload, per device and per partition. Every set is a billed CloudWatch
// metric per metric name and value combination.
func defaultDimensionSets() [][]string {
	return [][]string{
		{"Cluster"},
		{"Cluster", "Team"},
		{"Cluster", "Namespace", "Workload"},
		{"Cluster", "Node", "Device"},
		{"Cluster", "Node", "Device", "Partition"},
	}
}

func createDefaultConfig() component.Config {
	retry := configretry.NewDefaultBackOffConfig()
	// Keep retrying while CloudWatch is throttling or unreachable: the
	// sending queue bounds what is held, and nothing it accepted is dropped
	// after an arbitrary five minutes.
	retry.MaxElapsedTime = 0
	return &Config{
		TimeoutConfig:              exporterhelper.TimeoutConfig{Timeout: defaultTimeout},
		QueueConfig:                configoptional.Some(exporterhelper.NewDefaultQueueConfig()),
		RetryConfig:                retry,
		Output:                     OutputCloudWatchLogs,
		Namespace:                  defaultNamespace,
		Dimensions:                 defaultDimensions(),
		DimensionSets:              defaultDimensionSets(),
		DatapointDimensions:        DatapointDimensionsConfig{Enabled: true, Exclude: []string{as.AttrProcessPID}},
		FallbackDimensionSet:       FallbackAvailable,
		ResourceAttributesAsFields: true,
		Cumulative:                 CumulativeConfig{FirstPoint: string(delta.FirstPointStartTime), StateTTL: defaultStateTTL},
		LogGroupName:               defaultLogGroupName,
		LogStreamName:              defaultLogStreamName,
		PlaceholderFallback:        defaultPlaceholderFallback,
		File:                       FileConfig{MaxBackups: 5},
	}
}

func createMetrics(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
	c := cfg.(*Config)
	e, err := newEMFExporter(c, set)
	if err != nil {
		return nil, err
	}
	inner, err := exporterhelper.NewMetrics(ctx, set, cfg, e.pushMetrics,
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(c.TimeoutConfig),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithQueue(c.QueueConfig),
	)
	if err != nil {
		return nil, err
	}
	return newDeltaStage(inner, c, set.Logger), nil
}

func createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	c := cfg.(*Config)
	e, err := newEMFExporter(c, set)
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewLogs(ctx, set, cfg, e.pushLogs,
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(c.TimeoutConfig),
		exporterhelper.WithRetry(c.RetryConfig),
		exporterhelper.WithQueue(c.QueueConfig),
	)
}
