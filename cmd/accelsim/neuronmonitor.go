package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/neuronmonitor"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// neuronMonitor behaves like the neuron-monitor binary. The real one takes
// only -c/--config-file and --verbose; which simulated node it watches comes
// from the extra flags or, for wrappers that pass only the real flags, from
// ACCELSIM_* environment variables.
func neuronMonitor(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("neuron-monitor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var config string
	fs.StringVar(&config, "c", "", "neuron-monitor JSON configuration file")
	fs.StringVar(&config, "config-file", "", "neuron-monitor JSON configuration file")
	verbose := fs.Int("verbose", 0, "verbosity 0-4 (debug output on stderr)")
	scenarioPath := fs.String("scenario", os.Getenv("ACCELSIM_SCENARIO"), "scenario file ($ACCELSIM_SCENARIO)")
	nodeName := fs.String("node", os.Getenv("ACCELSIM_NODE"), "Neuron node to watch ($ACCELSIM_NODE)")
	seedText := fs.String("seed", os.Getenv("ACCELSIM_SEED"), "seed ($ACCELSIM_SEED; default: the scenario's)")
	speedText := fs.String("speed", envOr("ACCELSIM_SPEED", "1"), "simulated seconds per wall second ($ACCELSIM_SPEED)")
	startText := fs.String("start", os.Getenv("ACCELSIM_START"), "wall time of simulated time 0, RFC 3339 ($ACCELSIM_START; default: now)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "neuron-monitor: "+format+"\n", a...)
		return exitError
	}
	cfg := neuronmonitor.DefaultConfig()
	if config != "" {
		data, err := os.ReadFile(config)
		if err != nil {
			return fail("read configuration: %v", err)
		}
		if cfg, err = neuronmonitor.ParseConfig(data); err != nil {
			return fail("invalid configuration %s: %v", config, err)
		}
	}
	if *scenarioPath == "" || *nodeName == "" {
		return fail("no simulated node: set --scenario and --node (or ACCELSIM_SCENARIO and ACCELSIM_NODE)")
	}
	s, err := scenario.Load(*scenarioPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	seed := uint64(s.Seed)
	if *seedText != "" {
		v, err := strconv.ParseUint(*seedText, 10, 64)
		if err != nil {
			return fail("invalid seed %q", *seedText)
		}
		seed = v
	}
	speed, err := strconv.ParseFloat(*speedText, 64)
	if err != nil || speed <= 0 {
		return fail("invalid speed %q (want a positive number)", *speedText)
	}
	now := time.Now()
	start := now
	if *startText != "" {
		if start, err = time.Parse(time.RFC3339Nano, *startText); err != nil {
			return fail("invalid start %q (want RFC 3339, as endpoints.json started_at)", *startText)
		}
	}
	f, err := fleet.Build(s, seed)
	if err != nil {
		return fail("%v", err)
	}
	n, ok := f.Node(*nodeName)
	if !ok {
		return fail("scenario %s has no node %q", *scenarioPath, *nodeName)
	}
	clock := sim.WallClock{}
	tl := sim.Timeline{Start: start, Speed: speed, Clock: clock}
	m, err := neuronmonitor.New(cfg, sim.NewWorld(f), n, tl, now)
	if err != nil {
		return fail("%v", err)
	}
	if *verbose > 0 {
		fmt.Fprintf(stderr, "neuron-monitor: watching simulated node %s (%s, %d devices), speed %gx\n", n.Name, n.InstanceType, len(n.NeuronDevices), speed)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := m.Run(ctx, clock, stdout); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			return exitOK // the reader went away
		}
		return fail("%v", err)
	}
	return exitOK
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
