package neuronreceiver

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-accel/otelcol-accel/internal/sharedcomponent"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
)

// receivers holds one instance per component ID, shared by the metrics and
// logs pipelines, so that neuron-monitor runs once.
var receivers = sharedcomponent.NewMap[*neuronReceiver]()

// NewFactory returns the factory of the neuron receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		receiver.WithMetrics(createMetrics, metadata.MetricsStability),
		receiver.WithLogs(createLogs, metadata.LogsStability),
	)
}

func shared(set receiver.Settings, cfg component.Config) (*sharedcomponent.Component[*neuronReceiver], error) {
	return receivers.LoadOrStore(set.ID, func() (*neuronReceiver, error) {
		return newReceiver(cfg.(*Config), set)
	})
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	c, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	c.Unwrap().setMetricsConsumer(next)
	return c, nil
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	c, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	c.Unwrap().setLogsConsumer(next)
	return c, nil
}
