// Command accelsim simulates an accelerator fleet for the otelcol-accel demo,
// end-to-end tests and load tests. It speaks the real protocols and formats
// of the sources the collector reads: dcgm-exporter /metrics, neuron-monitor
// JSON on stdout, vLLM and SGLang /metrics, kubelet PodResources v1 over
// gRPC on unix sockets, and a read-only Kubernetes API.
//
//	accelsim serve --scenario fleet.yaml --state-dir DIR [--seed N] [--speed F] [--port-base P]
//	accelsim neuron-monitor [-c config.json] [--scenario F --node N --seed S --speed F --start T]
//	accelsim validate [-scenario] fleet.yaml
//	accelsim agent-config --endpoints DIR/endpoints.json --node NAME
//	accelsim events [-follow] FILE.jsonl
//	accelsim approve --state-dir DIR --node NODE --plan ID
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `usage:
  accelsim serve --scenario FILE --state-dir DIR [--seed N] [--speed F] [--port-base P] [--host H]
      serve the fleet; writes DIR/endpoints.json and prints "accelsim ready: DIR/endpoints.json"
  accelsim neuron-monitor [-c CONFIG] [--scenario FILE --node NAME --seed N --speed F --start RFC3339]
      behave like neuron-monitor for one Neuron node (flags fall back to ACCELSIM_* variables)
  accelsim validate [-scenario] FILE
      check a scenario file; errors name the line and the field
  accelsim agent-config --endpoints DIR/endpoints.json --node NAME
      print the collector config overlay that points a node agent at one simulated node
  accelsim events [-follow] FILE.jsonl
      print the health events and findings the collector wrote, one readable line each
  accelsim approve --state-dir DIR --node NODE --plan ID [--field-manager WHO]
      approve a remediation plan: kubectl annotate node NODE accelerator.otelcol-accel.io/approve=ID
`

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stdout, stderr)
	case "neuron-monitor":
		return neuronMonitor(args[1:], stdout, stderr)
	case "validate":
		return validate(args[1:], stdout, stderr)
	case "agent-config":
		return agentConfig(args[1:], stdout, stderr)
	case "events":
		return events(args[1:], stdout, stderr)
	case "approve":
		return approve(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "accelsim: unknown command %q\n%s", args[0], usage)
	return exitUsage
}
