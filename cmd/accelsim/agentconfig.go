package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/agentconfig"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
)

// agentConfig prints the collector overlay that points a node agent at one
// simulated node, or with --out-dir writes DIR/<node>/agent.yaml for every
// node and prints the node names, one per line, for scripts.
func agentConfig(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agent-config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("endpoints", "", "the endpoints.json `accelsim serve` wrote")
	node := fs.String("node", "", "print the overlay of this simulated node")
	outDir := fs.String("out-dir", "", "write DIR/<node>/agent.yaml for every node")
	if err := fs.Parse(args); err != nil || *file == "" || (*node == "") == (*outDir == "") {
		fmt.Fprintln(stderr, "usage: accelsim agent-config --endpoints DIR/endpoints.json (--node NAME | --out-dir DIR)")
		return exitUsage
	}
	f, err := endpoints.Read(*file)
	if err != nil {
		fmt.Fprintf(stderr, "accelsim agent-config: %v\n", err)
		return exitError
	}
	found := false
	for _, n := range f.Nodes {
		if *node != "" && n.Name != *node {
			continue
		}
		found = true
		out, err := agentconfig.Overlay(f, n)
		if err != nil {
			fmt.Fprintf(stderr, "accelsim agent-config: %v\n", err)
			return exitError
		}
		if *node != "" {
			stdout.Write(out)
			return exitOK
		}
		dir := filepath.Join(*outDir, n.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintf(stderr, "accelsim agent-config: %v\n", err)
			return exitError
		}
		if err := os.WriteFile(filepath.Join(dir, "agent.yaml"), out, 0o644); err != nil {
			fmt.Fprintf(stderr, "accelsim agent-config: %v\n", err)
			return exitError
		}
		fmt.Fprintln(stdout, n.Name)
	}
	if !found {
		fmt.Fprintf(stderr, "accelsim agent-config: no node %q in %s\n", *node, *file)
		return exitError
	}
	return exitOK
}
