package dcgmreceiver

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/otelcol-accel/otelcol-accel/internal/kernellog"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/exportersource"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/mps"
)

// Sources.
const (
	SourceNVML         = "nvml"
	SourceDCGMExporter = "dcgm_exporter"
)

// Config is the dcgm receiver's configuration.
type Config struct {
	// collection_interval, initial_delay and timeout (which also bounds the
	// HTTP request to dcgm-exporter).
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	// metrics and resource_attributes: enable or disable each.
	metadata.MetricsBuilderConfig `mapstructure:",squash"`
	// endpoint, tls, headers, …: the dcgm-exporter to scrape when source is
	// dcgm_exporter.
	confighttp.ClientConfig `mapstructure:",squash"`

	// Source is nvml (in-process, the default) or dcgm_exporter.
	Source string `mapstructure:"source"`
	// LibraryPath is the absolute path of libnvidia-ml.so.1 for source
	// nvml; empty searches the loader's path (the NVIDIA container runtime
	// puts it there).
	LibraryPath string `mapstructure:"library_path"`
	// Devices selects GPUs by index ("0") or UUID ("GPU-…", "MIG-…"); empty
	// selects all. A MIG instance is selected when it or its GPU is.
	Devices []string `mapstructure:"devices"`
	// ViolationUnit is the unit of dcgm-exporter's *_VIOLATION fields: auto
	// (from the field's HELP text, else ns), ns or us.
	ViolationUnit string `mapstructure:"violation_unit"`
	// PerPodUsage says that the scraped dcgm-exporter (4.5+, with
	// KUBERNETES_VIRTUAL_GPUS) measures DCGM_FI_DEV_GPU_UTIL and
	// DCGM_FI_DEV_FB_USED per pod on a shared GPU, from NVML's per-process
	// data: each pod's row then becomes a point with
	// accelerator.consumer.pod="<namespace>/<pod>" on the GPU, and no total
	// of those two is emitted beside them. When false (the default), the
	// per-pod rows dcgm-exporter prints are copies of the GPU's value and the
	// GPU gets that value once. For source dcgm_exporter only.
	PerPodUsage bool `mapstructure:"per_pod_usage"`

	MPS    MPSConfig    `mapstructure:"mps"`
	Health HealthConfig `mapstructure:"health"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// MPSConfig says where the MPS control daemon is.
type MPSConfig struct {
	// Enabled turns the MPS checks off when false.
	Enabled bool `mapstructure:"enabled"`
	// PipeDirectory is the daemon's CUDA_MPS_PIPE_DIRECTORY. Empty means
	// $CUDA_MPS_PIPE_DIRECTORY, else /tmp/nvidia-mps, checked only when it
	// exists; set explicitly, a missing directory reports the daemon down.
	PipeDirectory string `mapstructure:"pipe_directory"`
	// ControlCommand is the MPS control client to run.
	ControlCommand string `mapstructure:"control_command"`
	// Timeout bounds one control command.
	Timeout time.Duration `mapstructure:"timeout"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// HealthConfig tunes health tracking.
type HealthConfig struct {
	// XIDHold is how long an XID keeps the device in the state it implies
	// (e.g. failed after XID 79): XIDs are events, and a state that never
	// cleared would outlive the repair.
	XIDHold time.Duration `mapstructure:"xid_hold"`
	// KernelLog reads the NVIDIA driver's kernel log lines (every XID with
	// its process, fallen off the bus, NVSwitch SXids, PCIe AER on a GPU's
	// link) as a second source of health events, de-duplicated against
	// NVML's or dcgm-exporter's: see internal/kernellog.
	KernelLog kernellog.Config `mapstructure:"kernel_log"`

	// prevent unkeyed literal initialization
	_ struct{}
}

func createDefaultConfig() *Config {
	ctl := scraperhelper.NewDefaultControllerConfig()
	ctl.CollectionInterval = 10 * time.Second
	ctl.Timeout = 5 * time.Second
	return &Config{
		ControllerConfig:     ctl,
		MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		ClientConfig:         confighttp.NewDefaultClientConfig(),
		Source:               SourceNVML,
		ViolationUnit:        exportersource.ViolationUnitAuto,
		MPS: MPSConfig{
			Enabled:        true,
			ControlCommand: mps.DefaultControlCommand,
			Timeout:        5 * time.Second,
		},
		Health: HealthConfig{XIDHold: 10 * time.Minute, KernelLog: kernellog.DefaultConfig()},
	}
}

// Validate fails fast on settings the receiver cannot work with.
func (cfg *Config) Validate() error {
	var errs []error
	switch cfg.Source {
	case SourceNVML:
		if cfg.PerPodUsage {
			errs = append(errs, fmt.Errorf("per_pod_usage is only used with source: %s (NVML reports per-process data as accelerator.process.*); remove it", SourceDCGMExporter))
		}
		if cfg.LibraryPath != "" && !filepath.IsAbs(cfg.LibraryPath) {
			errs = append(errs, fmt.Errorf("library_path %q must be an absolute path to libnvidia-ml.so.1 (a relative one would be searched for by the loader)", cfg.LibraryPath))
		}
		if cfg.Endpoint != "" {
			errs = append(errs, fmt.Errorf("endpoint %q is only used with source: %s; remove it, or set source: %s", cfg.Endpoint, SourceDCGMExporter, SourceDCGMExporter))
		}
	case SourceDCGMExporter:
		if cfg.LibraryPath != "" {
			errs = append(errs, fmt.Errorf("library_path is only used with source: %s; remove it", SourceNVML))
		}
		if err := validateEndpoint(cfg.Endpoint); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, fmt.Errorf("source %q is not supported: use %s (in-process NVML) or %s (scrape dcgm-exporter)", cfg.Source, SourceNVML, SourceDCGMExporter))
	}
	if _, err := model.ParseDeviceFilter(cfg.Devices); err != nil {
		errs = append(errs, err)
	}
	switch cfg.ViolationUnit {
	case exportersource.ViolationUnitAuto, exportersource.ViolationUnitNS, exportersource.ViolationUnitUS:
	default:
		errs = append(errs, fmt.Errorf("violation_unit %q: use auto, ns or us", cfg.ViolationUnit))
	}
	if cfg.MPS.Enabled && cfg.MPS.ControlCommand == "" {
		errs = append(errs, errors.New("mps.control_command is empty: set it to the MPS control client (nvidia-cuda-mps-control) or set mps.enabled: false"))
	}
	if cfg.MPS.Timeout < 0 {
		errs = append(errs, errors.New("mps.timeout must not be negative"))
	}
	if cfg.Health.XIDHold < 0 {
		errs = append(errs, errors.New("health.xid_hold must not be negative"))
	}
	if err := cfg.Health.KernelLog.Validate("health.kernel_log"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func validateEndpoint(endpoint string) error {
	if endpoint == "" {
		return fmt.Errorf("source %s needs endpoint: dcgm-exporter's metrics URL, e.g. http://localhost:9400/metrics", SourceDCGMExporter)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("endpoint %q is not a URL: %w", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("endpoint %q must start with http:// or https://", endpoint)
	}
	if u.Host == "" {
		return fmt.Errorf("endpoint %q has no host", endpoint)
	}
	return nil
}
