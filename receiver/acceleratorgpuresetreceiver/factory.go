package acceleratorgpuresetreceiver

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratorgpuresetreceiver/internal/metadata"
)

// DefaultPrefix is the remediator's default annotation prefix.
const DefaultPrefix = accelschema.RemediationAnnotationPrefix

// NewFactory returns the accelerator_gpu_reset receiver factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithLogs(createLogs, metadata.LogsStability))
}

func createDefaultConfig() component.Config {
	return &Config{
		APIConfig:          k8sclient.APIConfig{AuthType: k8sclient.AuthServiceAccount},
		AnnotationPrefix:   DefaultPrefix,
		Command:            []string{"nvidia-smi", "-r", "-i", "{uuid}"},
		CommandTimeout:     2 * time.Minute,
		PollInterval:       10 * time.Second,
		PodResourcesSocket: "/var/lib/kubelet/pod-resources/kubelet.sock",
	}
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	return newReceiver(cfg.(*Config), set, next), nil
}
