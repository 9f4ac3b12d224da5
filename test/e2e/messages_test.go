//go:build e2e

package e2e

// unavailableSourceMessages are the log lines the agent must print on a
// machine without accelerators or Kubernetes, one per missing source. Each
// component adds its own as it lands in agent.yaml.
var unavailableSourceMessages = []string{}
