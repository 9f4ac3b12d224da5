package inferencereceiver

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/metadata"
)

func loadConfig(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.MustNewIDWithName(metadata.Type.String(), name).String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig()
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg.(*Config), confmap.Validate(cfg)
}

func TestLoadFullConfig(t *testing.T) {
	cfg, err := loadConfig(t, "all")
	require.NoError(t, err)

	want := createDefaultConfig()
	want.CollectionInterval = 10 * time.Second
	want.ScrapeTimeout = 3 * time.Second
	want.ErrorLogInterval = 10 * time.Minute
	want.MaxResponseBytes = 4 << 20
	want.TLS.CAFile = "/etc/otelcol-accel/inference-ca.pem"
	want.TLS.InsecureSkipVerify = true
	want.Headers.Set("Authorization", "Bearer vllm-api-key")
	want.ProxyURL = "http://proxy.internal:3128"
	want.Targets = []TargetConfig{
		{Endpoint: "http://10.0.0.7:8000/metrics", Server: "vllm"},
		{Endpoint: "10.0.0.8:30000", Server: "sglang", Timeout: time.Second},
		{Endpoint: "http://tgi.llm.svc:80", Server: "tgi", Model: "HuggingFaceH4/zephyr-7b-beta", Operation: "text_completion"},
		{Endpoint: "http://nim.llm.svc:8000", Server: "nim"},
		{Endpoint: "localhost:8001", Pod: PodConfig{Name: "vllm-0", Namespace: "llm", UID: "6f1c2a4e-0b7d-4a51-9a2e-3c1d5e7f9a01", Node: "gpu-node-1"}},
	}
	want.Discovery = DiscoveryConfig{
		Enabled:               true,
		APIConfig:             k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig, KubeConfig: "/etc/accelsim/kubeconfig"},
		NodeName:              "gpu-node-1",
		LabelSelector:         "app.kubernetes.io/component=inference-server",
		AnnotationPrefix:      "example.com",
		PrometheusAnnotations: false,
		Server:                "vllm",
		Operation:             "chat",
		SyncTimeout:           30 * time.Second,
	}
	assert.False(t, cfg.ResourceAttributes.ServerAddress.Enabled)
	assert.True(t, cfg.ResourceAttributes.K8sPodUID.Enabled)
	want.ResourceAttributes = cfg.ResourceAttributes
	assert.Equal(t, want, cfg)

	// Endpoints without scheme or path get them from the server kind.
	var urls []string
	for _, tc := range cfg.Targets {
		u, err := tc.url()
		require.NoError(t, err)
		urls = append(urls, u.String())
	}
	assert.Equal(t, []string{
		"http://10.0.0.7:8000/metrics",
		"http://10.0.0.8:30000/metrics",
		"http://tgi.llm.svc:80/metrics",
		"http://nim.llm.svc:8000/v1/metrics",
		"http://localhost:8001/metrics",
	}, urls)
}

func TestDiscoveryOnlyConfig(t *testing.T) {
	cfg, err := loadConfig(t, "discovery")
	require.NoError(t, err)
	assert.Equal(t, k8sclient.AuthServiceAccount, cfg.Discovery.AuthType)
	assert.Equal(t, "otelcol-accel.io", cfg.Discovery.AnnotationPrefix)
	assert.True(t, cfg.Discovery.PrometheusAnnotations)
	assert.Equal(t, 15*time.Second, cfg.CollectionInterval)
}

// An unset scrape_timeout follows a collection_interval shorter than its
// default, as Prometheus does; one that is set is kept, and refused when it
// is longer than the interval.
func TestScrapeTimeoutFollowsShortInterval(t *testing.T) {
	tests := map[string]struct {
		want    time.Duration
		wantErr string
	}{
		"fast":                     {want: time.Second},
		"fast_short_timeout":       {want: 500 * time.Millisecond},
		"fast_default_timeout_set": {wantErr: "scrape_timeout (5s) is longer than collection_interval (1s): scrapes would overlap; shorten scrape_timeout, or leave it unset to follow the interval"},
		"discovery":                {want: defaultScrapeTimeout},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := loadConfig(t, name)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.ScrapeTimeout)
		})
	}
}

func TestInvalidConfigs(t *testing.T) {
	tests := map[string][]string{
		"nothing":  {"no inference servers to scrape: list targets, or set discovery.enabled to find them among this node's pods"},
		"endpoint": {`endpoint "http://10.0.0.7:8000/metrics" is not used by the inference receiver: list servers under targets (or set discovery.enabled)`},
		"bad_target": {
			`targets[0]: endpoint "ftp://10.0.0.7/metrics": scheme must be http or https`,
			`targets[1]: server "ollama": use one of vllm, sglang, triton, tgi, nim, auto`,
			"targets[2]: endpoint is empty",
			"targets[3]: timeout must not be negative, got -1s",
			"targets[5]: endpoint http://10.0.0.9:8000/metrics is already targets[4]",
			"targets[6]: pod.uid is empty",
		},
		"slow": {
			"scrape_timeout (10s) is longer than collection_interval (5s): scrapes would overlap",
			"targets[0]: timeout (6s) is longer than collection_interval (5s)",
		},
		"bad_discovery": {
			"scrape_timeout must be positive, got 0s",
			`discovery: auth_type "token" is not one of serviceAccount, kubeConfig, none or tls`,
			`discovery: label_selector "app in (a"`,
			`discovery: server "ray": use one of`,
		},
	}
	for name, wants := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(t, name)
			require.Error(t, err)
			for _, w := range wants {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// A node with more servers than http.Transport's default 100 idle
// connections keeps one for each: as configured by a collector config that
// says nothing of keep-alives, the client caps neither.
func TestClientKeepsAConnectionPerServer(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"collection_interval": "10s"}).Unmarshal(cfg))
	set := componenttest.NewNopTelemetrySettings()
	set.MeterProvider, set.TracerProvider = nil, nil // no otelhttp wrapper: the transport itself
	hc, err := cfg.ToClient(t.Context(), nil, set)
	require.NoError(t, err)
	tr, ok := hc.Transport.(*http.Transport)
	require.Truef(t, ok, "client transport is %T", hc.Transport)
	assert.False(t, tr.DisableKeepAlives)
	assert.Zero(t, tr.MaxIdleConns, "no cap on idle connections across servers")
}
