//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The inference sidecar (sidecar.yaml) knows only its pod's identity; the
// node agent it sends to adds the pod's team and workload. This is the path
// the sidecar example in distributions/otelcol-accel/kubernetes/examples
// relies on.
func TestSidecarSeriesGetTheirPodsTeamAtTheNodeAgent(t *testing.T) {
	sim := e2etest.StartAccelsim(t, e2etest.SimOptions{})
	node := sim.Node(t, "gpu-h100-a")
	if len(node.Inference) == 0 {
		t.Fatal("the demo's H100 node serves no inference")
	}
	target := node.Inference[0]

	gateway := e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: []string{e2etest.ConfigPath("gateway.yaml")},
	})

	// The node agent, without static inference targets: the sidecar scrapes.
	nodeCfg := e2etest.NodeOverlay(t, sim.Endpoints, node)
	// The node overlay leaves OTLP out (demo agents share one machine with
	// the gateway's port); here it is back, as in agent.yaml on a real node.
	noTargets := e2etest.WriteConfig(t, "no-targets.yaml", `
receivers:
  inference:
    targets: []
service:
  pipelines:
    metrics:
      receivers: [dcgm, inference, otlp]
`)
	agent := e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: []string{
			e2etest.ConfigPath("agent.yaml"), e2etest.ConfigPath("agent-to-gateway.yaml"),
			e2etest.ConfigPath("demo-agent.yaml"), nodeCfg, noTargets,
		},
		Env: []string{
			"K8S_NODE_NAME=" + node.Name,
			"OTELCOL_ACCEL_GATEWAY_ENDPOINT=" + gateway.Env[e2etest.EnvOTLPGRPC],
			"OTELCOL_ACCEL_INTERVAL=5s",
		},
	})

	e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: []string{e2etest.ConfigPath("sidecar.yaml")},
		Env: []string{
			"K8S_POD_NAME=" + target.Pod, "K8S_NAMESPACE_NAME=" + target.Namespace,
			"K8S_POD_UID=" + target.PodUID, "K8S_NODE_NAME=" + node.Name,
			"OTELCOL_ACCEL_AGENT_ENDPOINT=" + agent.Env[e2etest.EnvOTLPGRPC],
			"OTELCOL_ACCEL_INFERENCE_ENDPOINT=" + target.URL,
			"OTELCOL_ACCEL_INFERENCE_SERVER=" + target.Server,
			"OTELCOL_ACCEL_INTERVAL=5s",
		},
	})

	team := teamOf(node, target.Pod)
	e2etest.Await(t, 90*time.Second, fmt.Sprintf("the sidecar's series of pod %s to reach the gateway with team %q", target.Pod, team), func() (string, bool) {
		fams, err := e2etest.ScrapePrometheus(gateway.PrometheusURL())
		if err != nil {
			return err.Error(), false
		}
		running := series(fams, "gen_ai_server_requests_running")
		return fmt.Sprintf("%d gen_ai_server_requests_running series, none of that pod with that team", len(running)), anyWith(running, map[string]string{
			"k8s_pod_uid": target.PodUID, "accelerator_team": team, "gen_ai_provider_name": target.Server,
		})
	})
}
