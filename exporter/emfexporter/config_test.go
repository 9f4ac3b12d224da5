package emfexporter

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/metadata"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig()
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg.(*Config)
}

func TestDefaultConfig(t *testing.T) {
	cfg := loadConfig(t, "")
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, OutputCloudWatchLogs, cfg.Output)
	assert.Equal(t, "OtelcolAccel", cfg.Namespace)
	assert.Equal(t, "/otelcol-accel/metrics", cfg.LogGroupName)
	assert.Equal(t, "{host.name}", cfg.LogStreamName)
	assert.Len(t, cfg.Dimensions, 7)
	assert.Equal(t, [][]string{{"Cluster"}, {"Cluster", "Team"}, {"Cluster", "Namespace", "Workload"}, {"Cluster", "Node", "Device"}, {"Cluster", "Node", "Device", "Partition"}}, cfg.DimensionSets)
	assert.True(t, cfg.DatapointDimensions.Enabled)
	assert.Equal(t, []string{"process.pid"}, cfg.DatapointDimensions.Exclude)
	assert.Equal(t, "start_time", cfg.Cumulative.FirstPoint)
	assert.Equal(t, 15*time.Minute, cfg.Cumulative.StateTTL)
	assert.True(t, cfg.QueueConfig.HasValue(), "the sending queue is on by default")
	assert.Nil(t, cfg.QueueConfig.Get().StorageID, "in memory unless a storage is named")
	assert.True(t, cfg.RetryConfig.Enabled)
	assert.Zero(t, cfg.RetryConfig.MaxElapsedTime, "retry until CloudWatch answers; the queue bounds what waits")
}

func TestCustomConfig(t *testing.T) {
	cfg := loadConfig(t, "custom")
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "Fleet/GPU", cfg.Namespace)
	assert.Equal(t, [][]string{{"Cluster", "Model"}}, cfg.MetricDeclarations[0].DimensionSets)
	require.NotNil(t, cfg.QueueConfig.Get().StorageID)
	assert.Equal(t, component.MustNewID("file_storage"), *cfg.QueueConfig.Get().StorageID)
	assert.Equal(t, int64(5000), cfg.QueueConfig.Get().QueueSize)
	assert.Equal(t, 10*time.Minute, cfg.RetryConfig.MaxElapsedTime)
	assert.Equal(t, int32(30), cfg.LogRetentionDays)
	assert.Equal(t, 262118, cfg.MaxEventBytes)
	assert.False(t, cfg.DatapointDimensions.Enabled)
	assert.Equal(t, "Percent", cfg.Units["hw.gpu.utilization"])

	file := loadConfig(t, "file")
	require.NoError(t, confmap.Validate(file))
	assert.Equal(t, 100, file.File.MaxMegabytes)
}

func TestInvalidConfigsSayWhatToFix(t *testing.T) {
	err := confmap.Validate(loadConfig(t, "bad"))
	require.Error(t, err)
	for _, want := range []string{
		`output "kinesis": want cloudwatch_logs, stdout or file`,
		`must not start with ':' or 'AWS/'`,
		`set 0 repeats "Cluster"`,
		`set 1 repeats set 0`,
		`selector "(": error parsing regexp`,
		`dimension_sets is empty (use [[]] for metrics without dimensions)`,
		`units[hw.power]: "Watts" is not a CloudWatch unit`,
		`cumulative::first_point "sometimes": want start_time, baseline or emit`,
		`log_group_name: log group name "/accel/{k8s.cluster.name": '{' without '}'`,
		`log_stream_name: log stream name "node:{host.name}": character ':' is not allowed`,
		`log_retention_days 2: CloudWatch Logs accepts 0 (never expire) or one of`,
		`endpoint "logs.us-east-1.amazonaws.com": want an http(s) URL`,
		`role_arn "otelcol-accel-emf": want an IAM role ARN`,
		`max_event_bytes 2000000: want 0 (default) or 4096 to 1048550`,
	} {
		assert.ErrorContains(t, err, want)
	}
	assert.ErrorContains(t, confmap.Validate(loadConfig(t, "file_without_path")), "output is file but file::path is empty")
}
