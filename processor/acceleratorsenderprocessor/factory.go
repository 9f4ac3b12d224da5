package acceleratorsenderprocessor

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelcol-accel/otelcol-accel/internal/senderauth"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorsenderprocessor/internal/metadata"
)

// NewFactory returns the accelerator_sender processor's factory.
func NewFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, createDefaultConfig,
		processor.WithLogs(createLogs, metadata.LogsStability),
		processor.WithMetrics(createMetrics, metadata.MetricsStability))
}

// The shipped manifests' agent service account; nothing passes
// unauthenticated unless the config says so.
func createDefaultConfig() component.Config {
	return &Config{AgentServiceAccounts: []string{"otelcol-accel/otelcol-accel"}}
}

func start(p *senderProcessor) processorhelper.Option {
	return processorhelper.WithStart(func(context.Context, component.Host) error {
		p.warnLocalMode()
		return nil
	})
}

func shutdown(p *senderProcessor) processorhelper.Option {
	return processorhelper.WithShutdown(func(context.Context) error {
		p.telemetry.Shutdown()
		return nil
	})
}

// The next consumer gets the check's mark in its context (senderauth.
// WithChecked): the remediator acts only on data that carries it.
func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := newSenderProcessor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	marked, err := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
		return next.ConsumeLogs(senderauth.WithChecked(ctx), ld)
	}, consumer.WithCapabilities(next.Capabilities()))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, marked, p.processLogs,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}), start(p), shutdown(p))
}

func createMetrics(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	p, err := newSenderProcessor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	marked, err := consumer.NewMetrics(func(ctx context.Context, md pmetric.Metrics) error {
		return next.ConsumeMetrics(senderauth.WithChecked(ctx), md)
	}, consumer.WithCapabilities(next.Capabilities()))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewMetrics(ctx, set, cfg, marked, p.processMetrics,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}), start(p), shutdown(p))
}
