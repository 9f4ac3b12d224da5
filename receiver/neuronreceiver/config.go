package neuronreceiver

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/otelcol-accel/otelcol-accel/internal/kernellog"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
)

// Input says where neuron-monitor's reports come from.
const (
	// InputSubprocess runs neuron-monitor as a child of the collector.
	InputSubprocess = "subprocess"
	// InputFile follows a file or FIFO that neuron-monitor writes to, for
	// when it runs in its own container.
	InputFile = "file"
	// InputPrometheus scrapes neuron-monitor-prometheus.py, the exporter
	// neuron-monitor ships with (AWS's neuron-monitor DaemonSet runs it).
	InputPrometheus = "prometheus"
)

var inputs = []string{InputSubprocess, InputFile, InputPrometheus}

// neuron-monitor metric groups the receiver maps. The system groups
// vcpu_usage and memory_info describe the host, not the accelerators; host
// metrics receivers cover them.
const (
	groupNeuronCoreCounters = "neuroncore_counters"
	groupMemoryUsed         = "memory_used"
	groupRuntimeVCPUUsage   = "neuron_runtime_vcpu_usage"
	groupExecutionStats     = "execution_stats"
	groupHWCounters         = "neuron_hw_counters"
)

var (
	runtimeGroups = []string{groupNeuronCoreCounters, groupMemoryUsed, groupRuntimeVCPUUsage, groupExecutionStats}
	systemGroups  = []string{groupHWCounters}
)

// Config is the neuron receiver's configuration.
type Config struct {
	// Input is "subprocess" (default), "file" or "prometheus".
	Input string `mapstructure:"input"`

	// Command is neuron-monitor's path, or its name on PATH.
	Command string `mapstructure:"command"`
	// Args are appended after the generated `-c <config file>`.
	Args []string `mapstructure:"args"`
	// Period is neuron-monitor's collection period; whole seconds. With
	// input: subprocess it is written to neuron-monitor's config; with the
	// other inputs it says what neuron-monitor runs with, and is the window
	// of data points whose source states none (the Prometheus page states
	// none).
	Period time.Duration `mapstructure:"period"`
	// MetricGroups are the neuron-monitor metric groups to request.
	MetricGroups []string `mapstructure:"metric_groups"`
	// TagFilter is neuron-monitor's tag_filter: a regular expression on
	// the runtimes' tags. Empty selects every runtime.
	TagFilter string `mapstructure:"tag_filter"`
	// RestartBackoff paces restarts of a neuron-monitor that exits.
	RestartBackoff BackoffConfig `mapstructure:"restart_backoff"`
	// ShutdownGracePeriod is how long neuron-monitor has to exit after
	// SIGTERM before it is killed.
	ShutdownGracePeriod time.Duration `mapstructure:"shutdown_grace_period"`

	// Path is the file or FIFO to follow with input: file.
	Path string `mapstructure:"path"`

	// With input: prometheus, the exporter's /metrics (endpoint) and how to
	// reach it (tls, headers, timeout, auth, …).
	confighttp.ClientConfig `mapstructure:",squash"`
	// CollectionInterval is how often the exporter's page is read with
	// input: prometheus.
	CollectionInterval time.Duration `mapstructure:"collection_interval"`

	metadata.MetricsBuilderConfig `mapstructure:",squash"`

	Health HealthConfig `mapstructure:"health"`
}

// HealthConfig is where health events come from besides neuron-monitor.
type HealthConfig struct {
	// KernelLog reads the Neuron driver's NEURON_HW_ERR kernel log lines
	// (SRAM, HBM, NeuronCore and DMA errors), which the driver writes when
	// the error happens, before neuron-monitor's next report: see
	// internal/kernellog.
	KernelLog kernellog.Config `mapstructure:"kernel_log"`
}

// BackoffConfig is an exponential backoff.
type BackoffConfig struct {
	InitialInterval time.Duration `mapstructure:"initial_interval"`
	MaxInterval     time.Duration `mapstructure:"max_interval"`
}

func createDefaultConfig() *Config {
	return &Config{
		Input:               InputSubprocess,
		Command:             "neuron-monitor",
		Period:              5 * time.Second,
		MetricGroups:        append(slices.Clone(runtimeGroups), systemGroups...),
		RestartBackoff:      BackoffConfig{InitialInterval: time.Second, MaxInterval: time.Minute},
		ShutdownGracePeriod: 5 * time.Second,
		ClientConfig:        confighttp.NewDefaultClientConfig(),
		CollectionInterval:  5 * time.Second,

		MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		Health:               HealthConfig{KernelLog: kernellog.DefaultConfig()},
	}
}

// Validate checks the configuration at startup.
func (cfg *Config) Validate() error {
	var errs []error
	switch cfg.Input {
	case InputSubprocess:
		if strings.TrimSpace(cfg.Command) == "" {
			errs = append(errs, errors.New(`command: must name neuron-monitor (a path, or a name on PATH)`))
		}
	case InputFile:
		if strings.TrimSpace(cfg.Path) == "" {
			errs = append(errs, errors.New(`path: required with input: file (the file or FIFO neuron-monitor's output is written to)`))
		}
	case InputPrometheus:
		if err := validateEndpoint(cfg.Endpoint); err != nil {
			errs = append(errs, err)
		}
		if cfg.CollectionInterval <= 0 {
			errs = append(errs, fmt.Errorf("collection_interval: must be positive, got %s", cfg.CollectionInterval))
		}
	default:
		errs = append(errs, fmt.Errorf(`input: must be one of %s, got %q`, quoted(inputs), cfg.Input))
	}
	if cfg.Path != "" && cfg.Input != InputFile {
		errs = append(errs, errors.New(`path: is read only with input: file; set input: file to follow a file or FIFO that neuron-monitor writes, or remove path`))
	}
	if len(cfg.Args) > 0 && cfg.Input != InputSubprocess {
		errs = append(errs, errors.New(`args: are passed to neuron-monitor only with input: subprocess`))
	}
	if cfg.Endpoint != "" && cfg.Input != InputPrometheus {
		errs = append(errs, errors.New(`endpoint: is read only with input: prometheus; set input: prometheus to scrape neuron-monitor-prometheus.py, or remove endpoint`))
	}

	if cfg.Period < time.Second || cfg.Period%time.Second != 0 {
		errs = append(errs, fmt.Errorf("period: must be a whole number of seconds, at least 1s (neuron-monitor's config takes seconds), got %s", cfg.Period))
	}

	known := append(slices.Clone(runtimeGroups), systemGroups...)
	if len(cfg.MetricGroups) == 0 {
		errs = append(errs, fmt.Errorf("metric_groups: must list at least one of %s", strings.Join(known, ", ")))
	}
	seen := map[string]bool{}
	for _, g := range cfg.MetricGroups {
		switch {
		case !slices.Contains(known, g):
			errs = append(errs, fmt.Errorf("metric_groups: %q is not a group this receiver maps; use %s", g, strings.Join(known, ", ")))
		case seen[g]:
			errs = append(errs, fmt.Errorf("metric_groups: %q is listed twice", g))
		}
		seen[g] = true
	}

	if cfg.TagFilter != "" {
		if _, err := regexp.Compile(cfg.TagFilter); err != nil {
			errs = append(errs, fmt.Errorf("tag_filter: not a regular expression: %w", err))
		}
	}

	b := cfg.RestartBackoff
	if b.InitialInterval <= 0 {
		errs = append(errs, fmt.Errorf("restart_backoff::initial_interval: must be positive, got %s", b.InitialInterval))
	}
	if b.MaxInterval < b.InitialInterval {
		errs = append(errs, fmt.Errorf("restart_backoff::max_interval: must be at least initial_interval (%s), got %s", b.InitialInterval, b.MaxInterval))
	}
	if err := cfg.Health.KernelLog.Validate("health.kernel_log"); err != nil {
		errs = append(errs, err)
	}
	if cfg.ShutdownGracePeriod <= 0 {
		errs = append(errs, fmt.Errorf("shutdown_grace_period: must be positive, got %s", cfg.ShutdownGracePeriod))
	}
	return errors.Join(errs...)
}

// validateEndpoint checks the shape of the exporter's URL; whether anything
// answers there is for run time to find out.
func validateEndpoint(endpoint string) error {
	if strings.TrimSpace(endpoint) == "" {
		return errors.New(`endpoint: required with input: prometheus (neuron-monitor-prometheus.py's metrics URL, e.g. http://localhost:8000/metrics)`)
	}
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return fmt.Errorf("endpoint: %q is not a URL: %w", endpoint, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("endpoint: %q must start with http:// or https://", endpoint)
	case u.Host == "":
		return fmt.Errorf("endpoint: %q has no host", endpoint)
	}
	return nil
}

func quoted(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func (cfg *Config) wants(group string) bool { return slices.Contains(cfg.MetricGroups, group) }

// allRuntimes reports whether neuron-monitor is asked about every runtime.
func (cfg *Config) allRuntimes() bool { return cfg.TagFilter == "" || cfg.TagFilter == ".*" }
