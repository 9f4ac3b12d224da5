package acceleratork8sreceiver

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-accel/otelcol-accel/internal/firstrequest"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/sharedcomponent"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver/internal/metadata"
)

// receivers shares one instance between the metrics and logs pipelines of
// one ID: one set of handlers on the shared informers.
var receivers = sharedcomponent.NewMap[*k8sReceiver]()

// NewFactory returns the accelerator_k8s receiver factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithMetrics(createMetrics, metadata.MetricsStability),
		receiver.WithLogs(createLogs, metadata.LogsStability))
}

func createDefaultConfig() component.Config {
	return &Config{
		APIConfig:          k8sclient.APIConfig{AuthType: k8sclient.AuthServiceAccount},
		CollectionInterval: 30 * time.Second,
		Resources:          []string{"nvidia.com/gpu", "nvidia.com/mig-*", "nvidia.com/gpu.shared", "aws.amazon.com/neuron*"},
		Buckets:            []float64{1, 2, 5, 10, 20, 30, 60, 120, 180, 300, 600, 900, 1800},
		ModelLabels:        []string{"otelcol-accel.io/model", "app.kubernetes.io/model"},
		FirstRequestWait:   10 * time.Minute,
	}
}

func shared(set receiver.Settings, cfg component.Config) (*sharedcomponent.Component[*k8sReceiver], error) {
	return receivers.LoadOrStore(set.ID, func() (*k8sReceiver, error) {
		return newReceiver(cfg.(*Config), set, k8sclient.Shared(), firstrequest.Shared(), time.Now), nil
	})
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	c, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	c.Unwrap().metrics = next
	return c, nil
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	c, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	c.Unwrap().logs = next
	return c, nil
}
