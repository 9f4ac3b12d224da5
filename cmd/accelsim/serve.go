package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleetserver"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kubeapi"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
)

// DefaultScenario is the demo fleet, relative to the repository root.
const DefaultScenario = "distributions/otelcol-accel/demo/fleet.yaml"

func serve(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scenarioPath := fs.String("scenario", DefaultScenario, "scenario file")
	stateDir := fs.String("state-dir", "", "directory for endpoints.json, the kubeconfig and the unix sockets (required)")
	seed := fs.Int64("seed", 0, "seed of identifiers and noise (default: the scenario's seed)")
	speed := fs.Float64("speed", 1, "simulated seconds per wall second")
	portBase := fs.Int("port-base", 0, "first TCP port (0: free ports)")
	host := fs.String("host", "127.0.0.1", "address to listen on")
	storyDelay := fs.Duration("story-delay", 15*time.Second,
		"wall time before the Kubernetes reliability story begins (a scale-up with image pulls, a zone imbalance, an unschedulable GPU pod, a NodeClaim Karpenter cannot launch); negative: no story")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *stateDir == "" {
		fmt.Fprintln(stderr, "accelsim serve: --state-dir is required")
		return exitUsage
	}
	if *speed <= 0 {
		fmt.Fprintln(stderr, "accelsim serve: --speed must be positive")
		return exitUsage
	}
	if *portBase < 0 || *portBase > 65535 {
		fmt.Fprintln(stderr, "accelsim serve: --port-base must be 0..65535")
		return exitUsage
	}
	s, err := scenario.Load(*scenarioPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	seedValue := uint64(s.Seed)
	if flagSet(fs, "seed") {
		seedValue = uint64(*seed)
	}
	f, err := fleet.Build(s, seedValue)
	if err != nil {
		fmt.Fprintln(stderr, "accelsim serve:", err)
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	r, err := fleetserver.Start(f, fleetserver.Options{
		ScenarioPath: *scenarioPath, StateDir: *stateDir, Seed: seedValue, Speed: *speed,
		PortBase: *portBase, Host: *host,
	})
	if err != nil {
		fmt.Fprintln(stderr, "accelsim serve:", err)
		return exitError
	}
	for _, n := range r.File.Nodes {
		src := n.DCGMExporterURL
		if n.NeuronMonitor != nil {
			src = n.NeuronMonitor.Path
		}
		fmt.Fprintf(stderr, "accelsim: node %-16s %-14s %s, %d inference servers, pod-resources %s\n", n.Name, n.InstanceType, src, len(n.Inference), n.PodResourcesSocket)
	}
	fmt.Fprintf(stderr, "accelsim: Kubernetes API %s (kubeconfig %s), seed %d, speed %gx\n", r.File.KubernetesAPI, r.File.Kubeconfig, seedValue, *speed)
	if *storyDelay >= 0 {
		// After a delay, so that a collector started after the ready line
		// watches the API before the story's changes begin.
		go func() {
			if err := kubeapi.PlayStory(ctx, r.Kube().Store(), f, time.Now().Add(*storyDelay), *speed); err != nil {
				fmt.Fprintln(stderr, "accelsim: reliability story:", err)
			}
		}()
		fmt.Fprintf(stderr, "accelsim: the Kubernetes reliability story begins in %s\n", *storyDelay)
	}
	fmt.Fprintf(stdout, "accelsim ready: %s\n", r.Path)
	<-ctx.Done()
	fmt.Fprintln(stderr, "accelsim: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(sctx); err != nil {
		fmt.Fprintln(stderr, "accelsim: shutdown:", err)
		return exitError
	}
	return exitOK
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
