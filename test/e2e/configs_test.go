//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// Every configuration the distribution ships, alone or layered the way the
// manifests and the demo layer them, is accepted by the built binary's own
// validation (component factories, config validation, pipelines); the node
// configs (agent.yaml and sidecar.yaml first in their stack) by the agent
// binary too, which is what the DaemonSet and sidecar images run.
func TestShippedConfigsValidate(t *testing.T) {
	full, agent := e2etest.CollectorBinary(t), e2etest.AgentBinary(t)
	stacks := [][]string{
		{"agent.yaml"},
		{"agent.yaml", "agent-to-gateway.yaml"},
		{"agent.yaml", "agent-to-gateway.yaml", "demo-agent.yaml"},
		{"agent.yaml", "agent-ecs.yaml"},
		{"gateway.yaml"},
		{"gateway.yaml", "demo-gateway.yaml"},
		// make run's gateway: remediation in approve mode on the simulator.
		{"gateway.yaml", "demo-gateway.yaml", "k8s-reliability.yaml", "remediation.yaml", "demo-remediation.yaml"},
		{"gateway.yaml", "k8s-reliability.yaml"},
		{"cloudwatch-emf.yaml", "k8s-reliability.yaml"},
		{"cloudwatch-otlp.yaml", "k8s-reliability.yaml", "remediation.yaml"},
		{"amp.yaml", "k8s-reliability.yaml"},
		{"gateway.yaml", "otlp.yaml"},
		{"cloudwatch-emf.yaml"},
		{"cloudwatch-otlp.yaml"},
		{"amp.yaml"},
		// The insights console layers on every gateway the chart runs.
		{"gateway.yaml", "insights.yaml"},
		{"gateway.yaml", "otlp.yaml", "insights.yaml"},
		{"cloudwatch-emf.yaml", "insights.yaml"},
		{"cloudwatch-otlp.yaml", "insights.yaml"},
		{"amp.yaml", "insights.yaml"},
		// … with an authenticator (the chart's insights.auth.type).
		{"gateway.yaml", "insights.yaml", "insights-bearertoken.yaml"},
		{"cloudwatch-emf.yaml", "insights.yaml", "insights-oidc.yaml"},
		{"sidecar.yaml"},
		// Remediation layers on a gateway (the remediation overlay).
		{"gateway.yaml", "remediation.yaml"},
		// … and on every gateway the Helm chart runs, with the console.
		{"gateway.yaml", "otlp.yaml", "remediation.yaml", "insights.yaml"},
		{"cloudwatch-emf.yaml", "remediation.yaml", "insights.yaml"},
		{"cloudwatch-otlp.yaml", "remediation.yaml"},
		{"amp.yaml", "remediation.yaml"},
	}
	// Every file in the config directory must be covered by a stack.
	covered := map[string]bool{}
	for _, s := range stacks {
		for _, f := range s {
			covered[f] = true
		}
	}
	files, _ := filepath.Glob(e2etest.ConfigPath("*.yaml"))
	for _, f := range files {
		if !covered[filepath.Base(f)] {
			t.Errorf("%s is shipped but not validated here", filepath.Base(f))
		}
	}
	env := append(os.Environ(),
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=example",
		"K8S_POD_NAME=p", "K8S_NAMESPACE_NAME=ns", "K8S_POD_UID=uid", "K8S_NODE_NAME=n",
		"OTELCOL_ACCEL_AGENT_ENDPOINT=127.0.0.1:4317", "OTELCOL_ACCEL_DEMO_DIR="+t.TempDir(),
		"OTELCOL_ACCEL_STORAGE_DIR="+t.TempDir(), "OTELCOL_ACCEL_QUEUE_DIR="+t.TempDir(),
		"OTELCOL_ACCEL_AMP_REMOTE_WRITE_URL=https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-e2e/api/v1/remote_write",
		"OTELCOL_ACCEL_OTLP_BACKEND_ENDPOINT=backend.example:4317",
		"OTELCOL_ACCEL_INSIGHTS_OIDC_ISSUER_URL=https://login.example.com", "OTELCOL_ACCEL_INSIGHTS_OIDC_AUDIENCE=otelcol-accel-console")
	nodeStacks := 0
	for _, stack := range stacks {
		args := []string{"validate"}
		var paths []string
		for _, f := range stack {
			paths = append(paths, e2etest.ConfigPath(f))
			args = append(args, "--config", e2etest.ConfigPath(f))
		}
		bins := []string{full}
		if e2etest.BuildFor(paths) == e2etest.BuildAgent {
			bins = append(bins, agent)
			nodeStacks++
		}
		for _, bin := range bins {
			cmd := exec.Command(bin, args...)
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s on %s: %v\n%s", strings.Join(stack, " + "), filepath.Base(bin), err, out)
			}
		}
	}
	if nodeStacks < 5 {
		t.Errorf("only %d stacks ran on the agent binary; every node stack (agent.yaml, agent-to-gateway, demo-agent, agent-ecs, sidecar) should", nodeStacks)
	}
}

// A configuration mistake stops the collector at startup with a message
// that names the component and what to change.
func TestConfigErrorFailsFastWithAnActionableMessage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(`
receivers:
  dcgm:
    source: dcgm
processors:
  accelerator_cost:
    pricing:
      files: [/nonexistent/prices.csv]
exporters:
  debug: {}
service:
  pipelines:
    metrics: {receivers: [dcgm], processors: [accelerator_cost], exporters: [debug]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(e2etest.CollectorBinary(t), "validate", "--config", bad).CombinedOutput()
	if err == nil {
		t.Fatalf("a bad config was accepted:\n%s", out)
	}
	for _, want := range []string{`receivers::dcgm`, `source "dcgm" is not supported: use nvml`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the error does not say %q:\n%s", want, out)
		}
	}
}
