package emfexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckv2extension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/sigv4authextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/extension/k8stokenauthextension"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
	"github.com/otelcol-accel/otelcol-accel/internal/cwlogstest"
)

const configDir = "../../distributions/otelcol-accel/config"

type factory interface {
	Type() component.Type
	CreateDefaultConfig() component.Config
}

// factories are the components the example configurations use.
func factories() map[string]map[component.Type]factory {
	out := map[string]map[component.Type]factory{"receivers": {}, "processors": {}, "exporters": {}, "extensions": {}}
	for kind, fs := range map[string][]factory{
		"receivers":  {otlpreceiver.NewFactory()},
		"processors": {batchprocessor.NewFactory(), memorylimiterprocessor.NewFactory()},
		"exporters":  {NewFactory(), otlphttpexporter.NewFactory()},
		"extensions": {sigv4authextension.NewFactory(), filestorage.NewFactory(), healthcheckv2extension.NewFactory(), k8stokenauthextension.NewFactory()},
	} {
		for _, f := range fs {
			out[kind][f.Type()] = f
		}
	}
	return out
}

// resolve reads a configuration file the way the collector does, with the
// file and env providers.
func resolve(t *testing.T, name string) *confmap.Conf {
	t.Helper()
	r, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs:              []string{"file:" + filepath.Join(configDir, name)},
		ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
		DefaultScheme:     "env",
	})
	require.NoError(t, err)
	conf, err := r.Resolve(context.Background())
	require.NoError(t, err)
	return conf
}

// loadAll unmarshals and validates every component of a configuration with
// its real factory, and checks that the pipelines use only what is defined.
func loadAll(t *testing.T, conf *confmap.Conf) map[component.ID]component.Config {
	t.Helper()
	all := factories()
	cfgs := map[component.ID]component.Config{}
	for kind, fs := range all {
		section, err := conf.Sub(kind)
		require.NoError(t, err)
		for key := range section.ToStringMap() {
			var id component.ID
			require.NoError(t, id.UnmarshalText([]byte(key)))
			f, ok := fs[id.Type()]
			require.True(t, ok, "%s %s: no factory in this test; add it to factories()", kind, id)
			cfg := f.CreateDefaultConfig()
			sub, err := section.Sub(key)
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg), "%s %s", kind, id)
			require.NoError(t, confmap.Validate(cfg), "%s %s", kind, id)
			cfgs[id] = cfg
		}
	}
	var service struct {
		Extensions []component.ID `mapstructure:"extensions"`
		Pipelines  map[string]struct {
			Receivers  []component.ID `mapstructure:"receivers"`
			Processors []component.ID `mapstructure:"processors"`
			Exporters  []component.ID `mapstructure:"exporters"`
		} `mapstructure:"pipelines"`
	}
	sub, err := conf.Sub("service")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(&service, confmap.WithIgnoreUnused()))
	require.NotEmpty(t, service.Pipelines)
	for _, id := range service.Extensions {
		assert.Contains(t, cfgs, id, "service uses undefined extension %s", id)
	}
	for name, p := range service.Pipelines {
		for _, ids := range [][]component.ID{p.Receivers, p.Processors, p.Exporters} {
			for _, id := range ids {
				assert.Contains(t, cfgs, id, "pipeline %s uses undefined %s", name, id)
			}
		}
	}
	return cfgs
}

func exampleEnv(t *testing.T) {
	isolateAWS(t)
	t.Setenv("AWS_REGION", "us-west-2")
	t.Setenv("OTELCOL_ACCEL_LOG_STREAM", "ip-10-0-1-17")
	t.Setenv("OTELCOL_ACCEL_QUEUE_DIR", t.TempDir())
}

func TestCloudWatchOTLPExampleConfig(t *testing.T) {
	exampleEnv(t)
	cfgs := loadAll(t, resolve(t, "cloudwatch-otlp.yaml"))

	metrics := cfgs[component.MustNewIDWithName("otlp_http", "cloudwatch_metrics")].(*otlphttpexporter.Config)
	logs := cfgs[component.MustNewIDWithName("otlp_http", "cloudwatch_logs")].(*otlphttpexporter.Config)
	assert.Equal(t, "https://monitoring.us-west-2.amazonaws.com/v1/metrics", metrics.MetricsEndpoint)
	assert.Equal(t, "https://logs.us-west-2.amazonaws.com/v1/logs", logs.LogsEndpoint)
	group, ok := logs.ClientConfig.Headers.Get("x-aws-log-group")
	require.True(t, ok)
	assert.Equal(t, "/otelcol-accel/events", string(group))
	stream, ok := logs.ClientConfig.Headers.Get("x-aws-log-stream")
	require.True(t, ok)
	assert.Equal(t, "ip-10-0-1-17", string(stream))

	// Each endpoint is signed for its own service.
	for exp, service := range map[*otlphttpexporter.Config]string{metrics: "monitoring", logs: "logs"} {
		require.True(t, exp.ClientConfig.Auth.HasValue())
		authID := exp.ClientConfig.Auth.Get().AuthenticatorID
		signer, ok := cfgs[authID].(*sigv4authextension.Config)
		require.True(t, ok, "authenticator %s is not a sigv4auth", authID)
		assert.Equal(t, service, signer.Service)
		assert.Equal(t, "us-west-2", signer.Region)
	}
}

func TestCloudWatchEMFExampleConfig(t *testing.T) {
	exampleEnv(t)
	cfgs := loadAll(t, resolve(t, "cloudwatch-emf.yaml"))
	metrics := cfgs[component.NewID(metadata.Type)].(*Config)
	events := cfgs[component.MustNewIDWithName("cloudwatch_emf", "events")].(*Config)
	assert.Equal(t, "us-west-2", metrics.Region)
	assert.Equal(t, "OtelcolAccel", metrics.Namespace)
	require.NotNil(t, metrics.QueueConfig.Get().StorageID)
	assert.Equal(t, "file_storage/queue", metrics.QueueConfig.Get().StorageID.String())
	assert.Equal(t, int32(90), events.LogRetentionDays)

	// Run the example's exporter and storage against the loopback
	// CloudWatch Logs: what it writes is valid and lands where it says.
	srv := cwlogstest.New("us-west-2", verifySignatures)
	defer srv.Close()
	metrics.Endpoint = srv.URL
	storageCfg := cfgs[component.MustNewIDWithName("file_storage", "queue")].(*filestorage.Config)
	f := filestorage.NewFactory()
	storage, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), storageCfg)
	require.NoError(t, err)
	require.NoError(t, storage.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, storage.Shutdown(context.Background())) }()
	host := &componenthealthtest.Host{Extensions: map[component.ID]component.Component{component.MustNewIDWithName("file_storage", "queue"): storage}}
	exp := createMetricsExporter(t, metrics, host)
	md := nodeMetrics("ip-10-0-1-17", time.Now(), 3, 0)
	require.NoError(t, exp.ConsumeMetrics(context.Background(), md))
	require.Eventually(t, func() bool {
		return len(srv.Events("/otelcol-accel/metrics/prod-east", "ip-10-0-1-17")) == 1
	}, 10*time.Second, 10*time.Millisecond, fmt.Sprint(srv.AllEvents()))
	require.NoError(t, exp.Shutdown(context.Background()))
	days, _ := srv.Retention("/otelcol-accel/metrics/prod-east")
	assert.Equal(t, int32(30), days)
	assert.Empty(t, srv.Violations())
}
