package acceleratordiagnosisprocessor

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelcol-accel/otelcol-accel/internal/sharedcomponent"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratordiagnosisprocessor/internal/metadata"
)

// instances holds one diagnosisProcessor per component ID, shared by the
// metrics and logs pipelines that name it: the metrics side reads latencies
// and device signals, the logs side health and Kubernetes events, and
// findings leave through the logs side.
var instances = sharedcomponent.NewMap[*diagnosisProcessor]()

// NewFactory returns the factory of the accelerator_diagnosis processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithMetrics(createMetrics, metadata.MetricsStability),
		processor.WithLogs(createLogs, metadata.LogsStability),
	)
}

func shared(set processor.Settings, cfg component.Config) (*sharedcomponent.Component[*diagnosisProcessor], error) {
	return instances.LoadOrStore(set.ID, func() (*diagnosisProcessor, error) {
		return newDiagnosisProcessor(set, cfg.(*Config)), nil
	})
}

func createMetrics(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	c, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewMetrics(ctx, set, cfg, next, c.Unwrap().processMetrics,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(c.Start),
		processorhelper.WithShutdown(c.Shutdown))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	c, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	c.Unwrap().addLogsConsumer(next)
	return processorhelper.NewLogs(ctx, set, cfg, next, c.Unwrap().processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		processorhelper.WithStart(c.Start),
		processorhelper.WithShutdown(c.Shutdown))
}
