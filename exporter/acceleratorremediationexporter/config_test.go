package acceleratorremediationexporter

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/guard"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/metadata"
)

func load(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg
}

func TestDefaultsAreCautious(t *testing.T) {
	cfg := load(t, "")
	require.NoError(t, cfg.Validate())
	assert.Equal(t, engine.Recommend, cfg.Mode)
	assert.Equal(t, 1, cfg.GuardRails.MaxNodes)
	assert.False(t, cfg.DryRun)
	assert.True(t, cfg.LeaderElection.Enabled)
	assert.Empty(t, cfg.Escalation.Endpoint)
}

func TestConfigLoads(t *testing.T) {
	cfg := load(t, "approve")
	require.NoError(t, cfg.Validate())
	assert.Equal(t, engine.Approve, cfg.Mode)
	assert.Equal(t, engine.Automatic, cfg.engineModes()["set_node_condition"])
	assert.Equal(t, []guard.Window{{Days: []string{"sat", "sun"}, Start: "02:00", Duration: 4 * time.Hour}}, cfg.GuardRails.MaintenanceWindows)
	assert.Equal(t, "us-west-2", cfg.AWS.Region)
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	err := load(t, "bad").Validate()
	require.Error(t, err)
	for _, want := range []string{
		`mode "yolo" is not one of recommend, approve, automatic`,
		`modes: "reboot_everything" is not a step`,
		`modes.drain_node: "sometimes"`,
		"approval_ttl must be positive",
		`annotation_prefix "a/b"`,
		"guard_rails.max_nodes must be at least 1",
		"leader_election needs kubernetes.enabled",
		"leader_election: namespace and lease_name must be set",
		`escalation.endpoint "ftp://example.com" is not an http(s) URL`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}
