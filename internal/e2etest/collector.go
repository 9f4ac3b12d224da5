package e2etest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CollectorOptions says how to start the distribution.
type CollectorOptions struct {
	// Configs are passed as --config flags, in order (later ones merge over
	// earlier ones); a value may be a path or any confmap URI ("yaml:…").
	Configs []string
	// Env holds extra environment variables ("KEY=value"). The configs in
	// distributions/ read their endpoints from the environment.
	Env []string
	// HealthEndpoint is where the healthcheckv2 extension listens
	// (host:port); the harness sets OTELCOL_ACCEL_HEALTH_ENDPOINT to it.
	// Empty picks a free port.
	HealthEndpoint string
	// StartTimeout bounds the wait for a healthy status (default 60s).
	StartTimeout time.Duration
	// Binary, when set, is the executable to run instead of the build's
	// (the load harness runs installed copies: InstallBinary).
	Binary string
	// Build is the distribution to run. Empty chooses by the first config:
	// the shipped node configs (agent.yaml, sidecar.yaml) run on the agent
	// build, as the DaemonSet and sidecar images do; everything else on the
	// full one.
	Build Build
}

// Build is one of the two distributions `make dist` builds.
type Build string

const (
	// BuildFull is _build/otelcol-accel (builder-config.yaml): gateways,
	// and the reference pipeline of the load harness.
	BuildFull Build = "full"
	// BuildAgent is _build/otelcol-accel-agent (builder-config-agent.yaml).
	BuildAgent Build = "agent"
)

// nodeConfigs are the shipped configs a node runs first in its stack.
var nodeConfigs = map[string]bool{ConfigPath("agent.yaml"): true, ConfigPath("sidecar.yaml"): true}

func (o CollectorOptions) build() Build {
	if o.Build != "" {
		return o.Build
	}
	return BuildFor(o.Configs)
}

// BuildFor is the build a stack of configs runs on: the agent build when
// the stack starts with a shipped node config, else the full one.
func BuildFor(configs []string) Build {
	if len(configs) > 0 && nodeConfigs[configs[0]] {
		return BuildAgent
	}
	return BuildFull
}

// BinaryOf is the path of build's binary.
func BinaryOf(t testing.TB, build Build) string {
	t.Helper()
	switch build {
	case BuildAgent:
		return AgentBinary(t)
	case BuildFull:
		return CollectorBinary(t)
	}
	t.Fatalf("unknown build %q", build)
	return ""
}

// Endpoint variables the configs in distributions/ read. The harness gives
// each a free loopback port unless the test sets it in Env, so collectors in
// parallel tests (or a `make run` on the same machine) never collide.
const (
	EnvHealth        = "OTELCOL_ACCEL_HEALTH_ENDPOINT"
	EnvPrometheus    = "OTELCOL_ACCEL_PROMETHEUS_ENDPOINT"
	EnvOTLPGRPC      = "OTELCOL_ACCEL_OTLP_GRPC_ENDPOINT"
	EnvOTLPHTTP      = "OTELCOL_ACCEL_OTLP_HTTP_ENDPOINT"
	EnvPprof         = "OTELCOL_ACCEL_PPROF_ENDPOINT"
	EnvZpages        = "OTELCOL_ACCEL_ZPAGES_ENDPOINT"
	EnvTelemetryHost = "OTELCOL_ACCEL_TELEMETRY_HOST"
	EnvTelemetryPort = "OTELCOL_ACCEL_TELEMETRY_PORT"
	// EnvInsights is the insights console's (demo-gateway.yaml,
	// insights.yaml); a gateway test on the default 8686 would collide
	// with a `make run`.
	EnvInsights = "OTELCOL_ACCEL_INSIGHTS_ENDPOINT"
)

var endpointVars = []string{EnvPrometheus, EnvOTLPGRPC, EnvOTLPHTTP, EnvPprof, EnvZpages, EnvInsights}

// Collector is a running otelcol-accel.
type Collector struct {
	*Process
	// Build is the distribution running.
	Build     Build
	HealthURL string
	// Env is the environment the collector was started with, including the
	// endpoints the harness picked (Env[EnvPrometheus], …).
	Env map[string]string
}

// PrometheusURL is the /metrics URL of the Prometheus exporter.
func (c *Collector) PrometheusURL() string {
	return "http://" + c.Env[EnvPrometheus] + "/metrics"
}

// StartCollector starts the built binary and waits until its health endpoint
// answers 200; otherwise the test fails with the collector's own log.
func StartCollector(t testing.TB, opts CollectorOptions) *Collector {
	t.Helper()
	if opts.HealthEndpoint == "" {
		opts.HealthEndpoint = FreeEndpoint(t)
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 60 * time.Second
	}
	args := []string{}
	for _, c := range opts.Configs {
		args = append(args, "--config", c)
	}
	envMap := map[string]string{EnvHealth: opts.HealthEndpoint, EnvTelemetryHost: "127.0.0.1"}
	for _, v := range endpointVars {
		envMap[v] = FreeEndpoint(t)
	}
	envMap[EnvTelemetryPort] = strconv.Itoa(FreePort(t))
	// Persistent state (baselines, queues) in the test's own directory.
	envMap["OTELCOL_ACCEL_STORAGE_DIR"] = t.TempDir()
	for _, kv := range opts.Env {
		k, v, _ := strings.Cut(kv, "=")
		envMap[k] = v
	}
	env := make([]string, 0, len(envMap))
	for k, v := range envMap {
		env = append(env, k+"="+v)
	}
	name, bin := "otelcol-accel", opts.Binary
	if bin == "" {
		bin = BinaryOf(t, opts.build())
	}
	if opts.build() == BuildAgent {
		name = "otelcol-accel-agent"
	}
	c := &Collector{
		Build:     opts.build(),
		Process:   StartProcess(t, name, bin, args, env),
		HealthURL: "http://" + envMap[EnvHealth] + "/status",
		Env:       envMap,
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.StartTimeout)
	defer cancel()
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatalf("collector did not become healthy: %v\n---- collector log ----\n%s", err, tail(c.Output(), 200))
	}
	return c
}

// HealthStatus is the healthcheckv2 /status document (the parts tests read).
type HealthStatus struct {
	Healthy    bool                    `json:"healthy"`
	Status     string                  `json:"status"`
	Error      string                  `json:"error,omitempty"`
	Components map[string]HealthStatus `json:"components,omitempty"`
}

// Health fetches the current status and the HTTP code.
func (c *Collector) Health() (HealthStatus, int, error) {
	var hs HealthStatus
	resp, err := http.Get(c.HealthURL + "?verbose")
	if err != nil {
		return hs, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return hs, resp.StatusCode, err
	}
	if err := json.Unmarshal(body, &hs); err != nil {
		return hs, resp.StatusCode, fmt.Errorf("health body %q: %w", body, err)
	}
	return hs, resp.StatusCode, nil
}

// WaitHealthy polls the health endpoint until it answers 200.
func (c *Collector) WaitHealthy(ctx context.Context) error {
	var last error
	for {
		if exited, err := c.Exited(); exited {
			return fmt.Errorf("collector exited: %v", err)
		}
		_, code, err := c.Health()
		if err == nil && code == http.StatusOK {
			return nil
		}
		if err != nil {
			last = err
		} else {
			last = fmt.Errorf("health endpoint answered %d", code)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%v (last: %v)", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
