package acceleratorinsightsexporter

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/otelcol-accel/otelcol-accel/internal/hostguard"
)

// Backends the console reads from.
const (
	// BackendMemory keeps a bounded model of what flows through this
	// gateway (the default).
	BackendMemory = "memory"
	// BackendPrometheus answers from a Prometheus-compatible store over
	// PromQL: the fleet-wide view when several gateways each see part of
	// the fleet, and history beyond the in-memory window.
	BackendPrometheus = "prometheus"
)

// Config is the accelerator_insights exporter's configuration.
type Config struct {
	// The console's HTTP server: endpoint (default localhost:8686), tls,
	// auth (the collector's auth extensions), and the rest of confighttp.
	confighttp.ServerConfig `mapstructure:",squash"`
	// Names: allowed_hosts and allowed_origins, the names (beyond
	// localhost, 127.0.0.1 and [::1] on the console's port) and the pages'
	// origins the console answers; any other Host is refused, on every
	// route (internal/hostguard: DNS rebinding).
	Names hostguard.Config `mapstructure:",squash"`

	// Backend is memory (default) or prometheus.
	Backend string `mapstructure:"backend"`
	// Memory bounds the in-memory model (backend memory).
	Memory MemoryConfig `mapstructure:"memory"`
	// Prometheus is the PromQL endpoint (Prometheus, Amazon Managed
	// Prometheus with sigv4auth, Mimir, Thanos) for backend prometheus.
	Prometheus PrometheusConfig `mapstructure:"prometheus"`
	// Logs bounds what is kept of the health events and findings, which
	// come from the logs pipeline whatever the backend.
	Logs LogsConfig `mapstructure:"logs"`

	// Storage is a storage extension (file_storage) that keeps findings'
	// acknowledge and dismiss state across restarts. Without it the state
	// lives as long as the process.
	Storage *component.ID `mapstructure:"storage"`

	// Remediation names an accelerator_remediation exporter of the same
	// collector (e.g. accelerator_remediation): the console shows its
	// plans and approves those waiting for approval. Without it the
	// console says no remediation is configured.
	Remediation *component.ID `mapstructure:"remediation"`

	// IdleUtilization: an allocated device or partition whose utilization
	// is below this counts as idle but allocated (the cost processor's
	// waste.idle_activity defaults to the same 0.05).
	IdleUtilization float64 `mapstructure:"idle_utilization"`
	// RateWindow is the window for rates and latency percentiles (waste
	// per hour, request rate, TTFT). At least two scrape intervals.
	RateWindow time.Duration `mapstructure:"rate_window"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// MemoryConfig bounds the in-memory model.
type MemoryConfig struct {
	// Retention is how far back charts reach.
	Retention time.Duration `mapstructure:"retention"`
	// PointsPerSeries bounds each series' ring buffer; older points are
	// overwritten. Retention / the agents' interval is enough.
	PointsPerSeries int `mapstructure:"points_per_series"`
	// Expiry: a device, partition or server not seen for this long leaves
	// the model (a node drained, a pod deleted).
	Expiry time.Duration `mapstructure:"expiry"`
}

// PrometheusConfig is where backend prometheus sends its queries.
type PrometheusConfig struct {
	// endpoint (the base URL: http://prometheus:9090, an AMP workspace's
	// https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>), tls,
	// headers, auth (sigv4auth for AMP), timeout.
	confighttp.ClientConfig `mapstructure:",squash"`
	// Step is the resolution of the device charts' range queries.
	Step time.Duration `mapstructure:"step"`
}

// LogsConfig bounds the events and findings kept.
type LogsConfig struct {
	// MaxEvents is the number of health events kept (oldest dropped).
	MaxEvents int `mapstructure:"max_events"`
	// MaxFindings is the number of distinct findings kept (the oldest
	// last seen dropped; their acknowledge/dismiss state stays stored).
	MaxFindings int `mapstructure:"max_findings"`
	// DecisionRetention is how long an acknowledge or dismiss is kept
	// (in the storage extension too) once its finding is no longer held
	// and was neither raised nor changed: a finding that comes back
	// later is open again. 0 keeps decisions for ever.
	DecisionRetention time.Duration `mapstructure:"decision_retention"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the shape of the configuration (values in range, the
// backend's required keys); it opens nothing.
func (c *Config) Validate() error {
	var errs []error
	if c.NetAddr.Endpoint == "" {
		errs = append(errs, errors.New("endpoint: must be host:port (the console listens there; localhost:8686 keeps it on this machine)"))
	} else if _, _, err := net.SplitHostPort(c.NetAddr.Endpoint); err != nil {
		errs = append(errs, fmt.Errorf("endpoint: %q is not host:port: %w", c.NetAddr.Endpoint, err))
	}
	if err := c.Names.Check(); err != nil {
		errs = append(errs, err)
	}
	if c.CORS.HasValue() {
		errs = append(errs, errors.New("cors: not supported: the console and its API are served from one origin, and cross-origin requests are refused on purpose; remove cors"))
	}
	switch c.Backend {
	case BackendMemory:
	case BackendPrometheus:
		if c.Prometheus.Endpoint == "" {
			errs = append(errs, errors.New("prometheus.endpoint: required with backend: prometheus (the store's base URL, e.g. http://prometheus:9090)"))
		} else if !strings.HasPrefix(c.Prometheus.Endpoint, "http://") && !strings.HasPrefix(c.Prometheus.Endpoint, "https://") {
			errs = append(errs, fmt.Errorf("prometheus.endpoint: %q must start with http:// or https://", c.Prometheus.Endpoint))
		}
		if c.Prometheus.Step <= 0 {
			errs = append(errs, fmt.Errorf("prometheus.step: must be positive, got %s", c.Prometheus.Step))
		}
	default:
		errs = append(errs, fmt.Errorf("backend: %q is not one of %s, %s", c.Backend, BackendMemory, BackendPrometheus))
	}
	if c.Memory.Retention <= 0 {
		errs = append(errs, fmt.Errorf("memory.retention: must be positive, got %s", c.Memory.Retention))
	}
	if c.Memory.PointsPerSeries < 2 || c.Memory.PointsPerSeries > 100_000 {
		errs = append(errs, fmt.Errorf("memory.points_per_series: must be 2..100000 (memory grows with it per device), got %d", c.Memory.PointsPerSeries))
	}
	if c.Memory.Expiry <= 0 {
		errs = append(errs, fmt.Errorf("memory.expiry: must be positive, got %s", c.Memory.Expiry))
	}
	if c.Logs.MaxEvents < 1 {
		errs = append(errs, fmt.Errorf("logs.max_events: must be at least 1, got %d", c.Logs.MaxEvents))
	}
	if c.Logs.MaxFindings < 1 {
		errs = append(errs, fmt.Errorf("logs.max_findings: must be at least 1, got %d", c.Logs.MaxFindings))
	}
	if c.Logs.DecisionRetention < 0 {
		errs = append(errs, fmt.Errorf("logs.decision_retention: must be 0 (keep for ever) or a positive duration such as 720h, got %s", c.Logs.DecisionRetention))
	}
	if c.Remediation != nil && c.Remediation.Type().String() != remediationType {
		errs = append(errs, fmt.Errorf("remediation: %q is not an %s exporter (name one, e.g. %s or %s/<name>)", c.Remediation, remediationType, remediationType, remediationType))
	}
	if c.IdleUtilization < 0 || c.IdleUtilization > 1 {
		errs = append(errs, fmt.Errorf("idle_utilization: must be a ratio 0..1, got %g", c.IdleUtilization))
	}
	if c.RateWindow < time.Second {
		errs = append(errs, fmt.Errorf("rate_window: must be at least 1s (two scrape intervals or more), got %s", c.RateWindow))
	}
	return errors.Join(errs...)
}
