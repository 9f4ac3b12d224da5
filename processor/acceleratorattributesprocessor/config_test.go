package acceleratorattributesprocessor

import (
	"context"
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
	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/metadata"
)

func loadConfig(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	cfg.NodeName = "" // not from the test machine's environment
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg, confmap.Validate(cfg)
}

func TestDefaultConfig(t *testing.T) {
	t.Setenv("K8S_NODE_NAME", "from-downward-api")
	cfg := createDefaultConfig().(*Config)
	assert.Equal(t, "from-downward-api", cfg.NodeName)
	assert.Equal(t, podresources.DefaultSocket, cfg.PodResourcesSocket)
	assert.Equal(t, k8sclient.AuthServiceAccount, cfg.KubernetesAPI.AuthType)
	assert.True(t, cfg.KubernetesAPI.Enabled)
	assert.True(t, cfg.KubernetesAPI.DRA)
	assert.Equal(t, 10*time.Second, cfg.RefreshInterval)
	assert.Equal(t, "/proc", cfg.ProcRoot)
	assert.Equal(t, []string{"team", "otelcol-accel.io/team"}, cfg.Team.Labels)
	assert.True(t, cfg.WorkloadType.Infer)
	assert.False(t, cfg.ECS.Enabled)
	assert.Equal(t, []string{"runai-reservation"}, cfg.PlaceholderNamespaces)
	assert.NoError(t, confmap.Validate(cfg))
}

func TestLoadConfig(t *testing.T) {
	cfg, err := loadConfig(t, "full")
	require.NoError(t, err)
	assert.Equal(t, "prod-us-east-1", cfg.ClusterName)
	assert.Equal(t, k8sclient.AuthKubeConfig, cfg.KubernetesAPI.AuthType)
	assert.Equal(t, "/etc/accelsim/kubeconfig", cfg.KubernetesAPI.KubeConfig)
	assert.False(t, cfg.KubernetesAPI.DRA)
	assert.Equal(t, "/host/proc", cfg.ProcRoot)
	assert.Equal(t, []string{"example.com/owner-team"}, cfg.Team.Annotations)
	assert.Equal(t, []string{"app", "version"}, cfg.PodLabels)
	assert.Equal(t, []string{"runai-reservation", "kai-reservation"}, cfg.PlaceholderNamespaces)
	assert.False(t, cfg.WorkloadType.Infer)
	assert.True(t, cfg.ECS.Enabled)
	assert.Equal(t, time.Minute, cfg.Static.ReloadInterval)

	_, err = loadConfig(t, "bare_metal")
	require.NoError(t, err)
}

func TestInvalidConfigsSayWhatToChange(t *testing.T) {
	tests := map[string][]string{
		"bad_auth":        {`auth_type "token" is not one of serviceAccount, kubeConfig, none or tls`},
		"nothing":         {"no source is enabled"},
		"bad_static_name": {`static.file: testdata/mapping.txt: unknown mapping file type ".txt": use .yaml, .yml or .csv`},
		"bad_misc": {"refresh_interval 100ms is below 1s", `proc_root "proc" must be an absolute path`, `mig_lookup "dcgm"`,
			"pod_labels has an empty key", "ecs.docker_socket is empty", "static.reload_interval -1s is negative",
			`placeholder_namespaces: "" is not a namespace name`, `placeholder_namespaces: "Runai_Reservation" is not a namespace name`},
	}
	for name, wants := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(t, name)
			require.Error(t, err)
			for _, w := range wants {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// Validate reads no file; Start reads the mapping and fails on a malformed
// one with its file and line.
func TestBadMappingFileFailsStart(t *testing.T) {
	cfg, err := loadConfig(t, "bad_static")
	require.NoError(t, err)
	p := newAttributesProcessor(cfg, componenttest.NewNopTelemetrySettings())
	require.ErrorContains(t, p.Start(context.Background(), componenttest.NewNopHost()),
		"static.file: testdata/broken_mapping.yaml:5: unknown key \"tema\"")
	require.NoError(t, p.Shutdown(context.Background()))
}
