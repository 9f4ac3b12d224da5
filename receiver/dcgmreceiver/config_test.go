package dcgmreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
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
	assert.Equal(t, SourceNVML, cfg.Source)
	assert.Equal(t, 10*time.Second, cfg.CollectionInterval)
	assert.Equal(t, 5*time.Second, cfg.ControllerConfig.Timeout)
	assert.True(t, cfg.MPS.Enabled)
	assert.Empty(t, cfg.MPS.PipeDirectory, "resolved at start from CUDA_MPS_PIPE_DIRECTORY or /tmp/nvidia-mps")
	assert.Equal(t, "nvidia-cuda-mps-control", cfg.MPS.ControlCommand)
	assert.Equal(t, 10*time.Minute, cfg.Health.XIDHold)
	assert.Equal(t, "auto", cfg.ViolationUnit)
	assert.False(t, cfg.PerPodUsage, "per-pod rows are copies unless the exporter is known to measure them")
	assert.True(t, cfg.Metrics.HwGpuUtilization.Enabled)
}

func TestExporterConfig(t *testing.T) {
	cfg := loadConfig(t, "exporter")
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, SourceDCGMExporter, cfg.Source)
	assert.Equal(t, "https://dcgm-exporter.gpu-operator.svc:9400/metrics", cfg.Endpoint)
	assert.Equal(t, 30*time.Second, cfg.CollectionInterval)
	// timeout bounds both the scrape and the HTTP request.
	assert.Equal(t, 3*time.Second, cfg.ControllerConfig.Timeout)
	assert.Equal(t, 3*time.Second, cfg.ClientConfig.Timeout)
	assert.Equal(t, "/etc/ssl/dcgm-exporter-ca.crt", cfg.TLS.CAFile)
	assert.Equal(t, []string{"0", "GPU-8c16e996-bd76-aa91-17e7-b48bcd0208ba"}, cfg.Devices)
	assert.Equal(t, "us", cfg.ViolationUnit)
	assert.True(t, cfg.PerPodUsage)
	assert.False(t, cfg.Metrics.AcceleratorSmOccupancy.Enabled)
	assert.False(t, cfg.ResourceAttributes.K8sPodName.Enabled)
}

func TestMPSConfig(t *testing.T) {
	cfg := loadConfig(t, "mps")
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "/run/nvidia/mps", cfg.MPS.PipeDirectory)
	assert.Equal(t, "/usr/local/nvidia/bin/nvidia-cuda-mps-control", cfg.MPS.ControlCommand)
	assert.Equal(t, 2*time.Second, cfg.MPS.Timeout)
	assert.Equal(t, 30*time.Minute, cfg.Health.XIDHold)
}

func TestKernelLogConfig(t *testing.T) {
	cfg := loadConfig(t, "kernel_log")
	require.NoError(t, confmap.Validate(cfg))
	kl := cfg.Health.KernelLog
	assert.Equal(t, "kmsg", kl.Source)
	assert.Equal(t, "/host/dev/kmsg", kl.Path)
	require.NotNil(t, kl.Storage)
	assert.Equal(t, "file_storage", kl.Storage.String())
	assert.Equal(t, 10*time.Second, kl.DedupWindow)
	assert.False(t, createDefaultConfig().Health.KernelLog.Enabled(), "off unless configured (it needs the host's log mounted)")
}

func TestLibraryPath(t *testing.T) {
	cfg := loadConfig(t, "library_path")
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "/host/driver/lib64/libnvidia-ml.so.1", cfg.LibraryPath)
}

func TestInvalidConfigs(t *testing.T) {
	for name, want := range map[string]string{
		"bad_source":                   `source "dcgm" is not supported: use nvml (in-process NVML) or dcgm_exporter (scrape dcgm-exporter)`,
		"exporter_without_endpoint":    "source dcgm_exporter needs endpoint: dcgm-exporter's metrics URL, e.g. http://localhost:9400/metrics",
		"exporter_bad_scheme":          `endpoint "localhost:9400" must start with http:// or https://`,
		"nvml_with_endpoint":           `endpoint "http://localhost:9400/metrics" is only used with source: dcgm_exporter`,
		"bad_devices":                  `devices: "first" is neither a GPU index (0, 1, …) nor a UUID (GPU-…, MIG-…)`,
		"bad_violation_unit":           `violation_unit "ms": use auto, ns or us`,
		"bad_interval":                 `"collection_interval": requires positive value`,
		"relative_library_path":        `library_path "lib/libnvidia-ml.so.1" must be an absolute path`,
		"exporter_with_library_path":   "library_path is only used with source: nvml",
		"nvml_with_per_pod_usage":      "per_pod_usage is only used with source: dcgm_exporter",
		"kernel_log_file_without_path": "health.kernel_log.path is required with source: file",
		"kernel_log_bad_source":        `health.kernel_log.source "dmesg": use kmsg (/dev/kmsg), journal (journalctl -k), file`,
		"kernel_log_relative_path":     `health.kernel_log.path "kern.log" must be absolute`,
	} {
		t.Run(name, func(t *testing.T) {
			err := confmap.Validate(loadConfig(t, name))
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
		})
	}
}

func TestUnknownKeyIsRejected(t *testing.T) {
	cm := confmapFromYAML(t, "sourse: nvml")
	cfg := NewFactory().CreateDefaultConfig()
	err := cm.Unmarshal(cfg)
	require.ErrorContains(t, err, "sourse")
}
