package acceleratorattributesprocessor

import (
	"context"
	"os"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	"github.com/otelcol-accel/otelcol-accel/internal/sharedcomponent"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/ecs"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/metadata"
)

// processors shares one instance between the metrics, logs and traces
// pipelines of one component ID: one kubelet connection, one set of informers.
var processors = sharedcomponent.NewMap[*attributesProcessor]()

// NewFactory returns the accelerator_attributes processor factory.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithMetrics(createMetrics, metadata.MetricsStability),
		processor.WithLogs(createLogs, metadata.LogsStability),
		processor.WithTraces(createTraces, metadata.TracesStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		NodeName:           os.Getenv("K8S_NODE_NAME"),
		RefreshInterval:    10 * time.Second,
		PodResourcesSocket: podresources.DefaultSocket,
		KubernetesAPI: KubernetesAPIConfig{
			Enabled:   true,
			APIConfig: k8sclient.APIConfig{AuthType: k8sclient.AuthServiceAccount},
			DRA:       true,
		},
		ProcRoot:  "/proc",
		MIGLookup: migLookupNVML,
		Team: KeysConfig{
			Labels:      []string{"team", "otelcol-accel.io/team"},
			Annotations: []string{"otelcol-accel.io/team"},
		},
		WorkloadName: KeysConfig{
			Labels:      []string{"otelcol-accel.io/workload", "app.kubernetes.io/part-of"},
			Annotations: []string{"otelcol-accel.io/workload"},
		},
		WorkloadType: WorkloadTypeConfig{
			KeysConfig: KeysConfig{
				Labels:      []string{"otelcol-accel.io/workload-type"},
				Annotations: []string{"otelcol-accel.io/workload-type"},
			},
			Infer: true,
		},
		PlaceholderNamespaces: []string{"runai-reservation"},
		ECS:                   ECSConfig{DockerSocket: ecs.DefaultSocket},
		Static:                StaticConfig{ReloadInterval: 30 * time.Second},
	}
}

var processorCapabilities = consumer.Capabilities{MutatesData: true}

func shared(set processor.Settings, cfg component.Config) (*sharedcomponent.Component[*attributesProcessor], error) {
	return processors.LoadOrStore(set.ID, func() (*attributesProcessor, error) {
		p := newAttributesProcessor(cfg.(*Config), set.TelemetrySettings)
		p.version = set.BuildInfo.Version
		return p, nil
	})
}

func createMetrics(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	comp, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewMetrics(ctx, set, cfg, next, comp.Unwrap().processMetrics,
		processorhelper.WithCapabilities(processorCapabilities),
		processorhelper.WithStart(comp.Start),
		processorhelper.WithShutdown(comp.Shutdown))
}

func createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	comp, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewLogs(ctx, set, cfg, next, comp.Unwrap().processLogs,
		processorhelper.WithCapabilities(processorCapabilities),
		processorhelper.WithStart(comp.Start),
		processorhelper.WithShutdown(comp.Shutdown))
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	comp, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, comp.Unwrap().processTraces,
		processorhelper.WithCapabilities(processorCapabilities),
		processorhelper.WithStart(comp.Start),
		processorhelper.WithShutdown(comp.Shutdown))
}
