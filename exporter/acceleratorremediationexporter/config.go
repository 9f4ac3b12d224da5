package acceleratorremediationexporter

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/guard"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/leader"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Config is the accelerator_remediation exporter's configuration.
type Config struct {
	// Mode is every step's mode unless Modes names the step: recommend
	// (the default: plans are logged and shown, nothing runs), approve (a
	// plan waits for `kubectl annotate node <node> <prefix>/approve=<plan
	// id>`), automatic.
	Mode engine.Mode `mapstructure:"mode"`
	// Modes sets the mode of single steps (internal/xid's step names:
	// set_node_condition, record_event, taint_device, cordon_node,
	// evict_holders, drain_node, restart_workload, reset_gpu,
	// reboot_instance, mark_instance_unhealthy, drain_ecs_instance,
	// escalate).
	Modes map[string]engine.Mode `mapstructure:"modes"`
	// DryRun asks every outside system to check the requests without
	// applying them (Kubernetes dryRun=All, EC2 DryRun).
	DryRun bool `mapstructure:"dry_run"`
	// ApprovalTTL is how long a plan waits for its approval before it
	// expires.
	ApprovalTTL time.Duration `mapstructure:"approval_ttl"`
	// Prefix is the node annotation and taint key prefix.
	Prefix string `mapstructure:"annotation_prefix"`
	// Interval is how often plans are advanced.
	Interval time.Duration `mapstructure:"interval"`
	// Retention is how long finished plans are kept (the cooldowns and the
	// hourly budget are read from them).
	Retention time.Duration `mapstructure:"retention"`
	// Storage is the storage extension the plans are kept in; without it
	// plans live in memory only and a restart forgets them.
	Storage *component.ID `mapstructure:"storage"`

	GuardRails guard.Config `mapstructure:"guard_rails"`
	Retry      RetryConfig  `mapstructure:"retry"`
	// EvictionTimeout bounds how long an eviction may stay blocked by a
	// PodDisruptionBudget before the plan stops and escalates.
	EvictionTimeout time.Duration `mapstructure:"eviction_timeout"`

	// GPUReset lets the reset_gpu step ask the agent on the device's node
	// for the reset (the node annotation <prefix>/gpu-reset; the agent's
	// accelerator_gpu_reset receiver runs the command). Off by default:
	// then the step is skipped with the instruction to reset by hand.
	GPUReset GPUResetConfig `mapstructure:"gpu_reset"`

	Kubernetes     KubernetesConfig `mapstructure:"kubernetes"`
	LeaderElection leader.Config    `mapstructure:"leader_election"`
	AWS            AWSConfig        `mapstructure:"aws"`
	Escalation     EscalationConfig `mapstructure:"escalation"`
}

// RetryConfig spaces out a failing step's attempts (internal/backoff).
type RetryConfig struct {
	InitialInterval time.Duration `mapstructure:"initial_interval"`
	MaxInterval     time.Duration `mapstructure:"max_interval"`
	MaxAttempts     int           `mapstructure:"max_attempts"`
}

// GPUResetConfig turns on the node-local GPU reset through the agents.
type GPUResetConfig struct {
	Enabled bool `mapstructure:"enabled"`
}

// KubernetesConfig is how the remediator reaches the API server.
type KubernetesConfig struct {
	Enabled             bool `mapstructure:"enabled"`
	k8sclient.APIConfig `mapstructure:",squash"`
}

// AWSConfig turns on the AWS executors (EC2 reboot, Auto Scaling instance
// health, ECS draining). Credentials come from the SDK's default chain.
type AWSConfig struct {
	Enabled bool   `mapstructure:"enabled"`
	Region  string `mapstructure:"region"`
	// Endpoint overrides every service's endpoint (a VPC endpoint, or a
	// test's loopback server).
	Endpoint string `mapstructure:"endpoint"`
}

// EscalationConfig is the webhook incident bundles are posted to; an empty
// endpoint turns escalation off.
type EscalationConfig struct {
	confighttp.ClientConfig `mapstructure:",squash"`
	// MetricsWindow is how much of the device's recent metrics the bundle
	// carries.
	MetricsWindow time.Duration `mapstructure:"metrics_window"`
}

var modes = []engine.Mode{engine.Recommend, engine.Approve, engine.Automatic}

// Validate checks the configuration's shape.
func (c *Config) Validate() error {
	var errs []error
	if !slices.Contains(modes, c.Mode) {
		errs = append(errs, fmt.Errorf("mode %q is not one of recommend, approve, automatic", c.Mode))
	}
	for step, m := range c.Modes {
		if !slices.Contains(xid.Steps, xid.Step(step)) {
			names := make([]string, len(xid.Steps))
			for i, s := range xid.Steps {
				names[i] = string(s)
			}
			errs = append(errs, fmt.Errorf("modes: %q is not a step (one of %s)", step, strings.Join(names, ", ")))
		}
		if !slices.Contains(modes, m) {
			errs = append(errs, fmt.Errorf("modes.%s: %q is not one of recommend, approve, automatic", step, m))
		}
	}
	if c.ApprovalTTL <= 0 {
		errs = append(errs, errors.New("approval_ttl must be positive"))
	}
	if c.Prefix == "" || strings.ContainsAny(c.Prefix, "/ ") {
		errs = append(errs, fmt.Errorf("annotation_prefix %q must be a DNS subdomain such as accelerator.otelcol-accel.io", c.Prefix))
	}
	if c.Interval <= 0 || c.Retention <= 0 || c.EvictionTimeout <= 0 {
		errs = append(errs, errors.New("interval, retention and eviction_timeout must be positive"))
	}
	if c.Retry.InitialInterval <= 0 || c.Retry.MaxInterval < c.Retry.InitialInterval || c.Retry.MaxAttempts < 1 {
		errs = append(errs, errors.New("retry: needs 0 < initial_interval <= max_interval and max_attempts >= 1"))
	}
	errs = append(errs, c.GuardRails.Check())
	if c.Kubernetes.Enabled {
		if err := c.Kubernetes.Check(); err != nil {
			errs = append(errs, fmt.Errorf("kubernetes: %w", err))
		}
	}
	if c.GPUReset.Enabled && !c.Kubernetes.Enabled {
		errs = append(errs, errors.New("gpu_reset needs kubernetes.enabled (the request is a node annotation the node's agent watches)"))
	}
	if c.LeaderElection.Enabled && !c.Kubernetes.Enabled {
		errs = append(errs, errors.New("leader_election needs kubernetes.enabled (the lease is a Kubernetes object)"))
	}
	errs = append(errs, c.LeaderElection.Check())
	if c.AWS.Enabled && c.AWS.Endpoint != "" {
		if u, err := url.Parse(c.AWS.Endpoint); err != nil || u.Scheme == "" || u.Host == "" {
			errs = append(errs, fmt.Errorf("aws.endpoint %q is not an absolute URL", c.AWS.Endpoint))
		}
	}
	if e := c.Escalation.Endpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("escalation.endpoint %q is not an http(s) URL", e))
		}
	}
	return errors.Join(errs...)
}

func (c *Config) engineModes() map[xid.Step]engine.Mode {
	out := make(map[xid.Step]engine.Mode, len(c.Modes))
	for k, v := range c.Modes {
		out[xid.Step(k)] = v
	}
	return out
}
