package e2etest

import (
	"strconv"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
)

// Fleet is the demo topology `make run` starts: one node agent per
// simulated node, running the shipped agent.yaml layered with
// agent-to-gateway.yaml, demo-agent.yaml and the node's generated overlay,
// all sending OTLP to one gateway (gateway.yaml + demo-gateway.yaml) that
// exposes Prometheus and writes EMF and events files.
type Fleet struct {
	Sim     *Sim
	Gateway *Collector
	Agents  map[string]*Collector
	// OutDir holds the gateway's emf.jsonl and events.jsonl.
	OutDir string
}

// FleetOptions tunes StartFleet.
type FleetOptions struct {
	Sim SimOptions
	// Nodes limits the agents to these simulated nodes (default: all).
	Nodes []string
	// GatewayConfigs are extra configs layered on the gateway's.
	GatewayConfigs []string
	// GatewayEnv are extra environment variables for the gateway
	// ("KEY=value"), such as what a layered config reads.
	GatewayEnv []string
	// AgentConfigs are extra configs layered on every agent's, before the
	// node overlay.
	AgentConfigs []string
	// Interval is the agents' collection interval (default 5s, the
	// shortest the inference receiver's 5 s scrape timeout allows).
	Interval string
	// Cluster runs the gateway as `make run` does on the simulated cluster:
	// accelerator_k8s (k8s-reliability.yaml) and remediation in approve
	// mode (remediation.yaml, demo-remediation.yaml), both on the
	// simulator's kubeconfig. GatewayConfigs come after these layers.
	Cluster bool
}

// ClusterGatewayConfigs are the layers FleetOptions.Cluster adds after
// gateway.yaml and demo-gateway.yaml (scripts/run-demo.sh's order).
func ClusterGatewayConfigs() []string {
	return []string{ConfigPath("k8s-reliability.yaml"), ConfigPath("remediation.yaml"), ConfigPath("demo-remediation.yaml")}
}

// clusterGatewayEnv points those layers at the simulator's API server.
func clusterGatewayEnv(sim *Sim) []string {
	return []string{
		"OTELCOL_ACCEL_KUBECONFIG=" + sim.Endpoints.Kubeconfig,
		"OTELCOL_ACCEL_K8S_AUTH=kubeConfig",
		"OTELCOL_ACCEL_K8S_INTERVAL=5s",
	}
}

// StartFleet starts the simulator, the gateway and the agents.
func StartFleet(t testing.TB, opts FleetOptions) *Fleet {
	t.Helper()
	sim := StartAccelsim(t, opts.Sim)
	out := t.TempDir()
	gwConfigs := []string{ConfigPath("gateway.yaml"), ConfigPath("demo-gateway.yaml")}
	gwEnv := []string{"OTELCOL_ACCEL_DEMO_DIR=" + out}
	if opts.Cluster {
		gwConfigs = append(gwConfigs, ClusterGatewayConfigs()...)
		gwEnv = append(gwEnv, clusterGatewayEnv(sim)...)
	}
	gw := StartCollector(t, CollectorOptions{
		Configs: append(gwConfigs, opts.GatewayConfigs...),
		Env:     append(gwEnv, opts.GatewayEnv...),
	})
	if opts.Interval == "" {
		opts.Interval = "5s"
	}
	want := map[string]bool{}
	for _, n := range opts.Nodes {
		want[n] = true
	}
	f := &Fleet{Sim: sim, Gateway: gw, Agents: map[string]*Collector{}, OutDir: out}
	for _, node := range sim.Endpoints.Nodes {
		if len(want) > 0 && !want[node.Name] {
			continue
		}
		f.Agents[node.Name] = StartAgent(t, sim.Endpoints, node, gw.Env[EnvOTLPGRPC], opts.Interval, opts.AgentConfigs...)
	}
	return f
}

// StartAgent starts one node agent for a simulated node, sending to the
// gateway at gatewayOTLP.
func StartAgent(t testing.TB, f *endpoints.File, node endpoints.Node, gatewayOTLP, interval string, extraConfigs ...string) *Collector {
	t.Helper()
	configs := []string{ConfigPath("agent.yaml"), ConfigPath("agent-to-gateway.yaml"), ConfigPath("demo-agent.yaml")}
	configs = append(append(configs, extraConfigs...), NodeOverlay(t, f, node))
	return StartCollector(t, CollectorOptions{
		Configs: configs,
		Env: []string{
			"K8S_NODE_NAME=" + node.Name,
			"OTELCOL_ACCEL_GATEWAY_ENDPOINT=" + gatewayOTLP,
			"OTELCOL_ACCEL_INTERVAL=" + interval,
		},
	})
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
func utoa(u uint64) string  { return strconv.FormatUint(u, 10) }
