package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
)

func validate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("scenario", "", "scenario file")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *path == "" && fs.NArg() == 1 {
		*path = fs.Arg(0)
	}
	if *path == "" {
		fmt.Fprintln(stderr, "accelsim validate: name the scenario file (-scenario FILE)")
		return exitUsage
	}
	s, err := scenario.Load(*path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	f, err := fleet.Build(s, uint64(s.Seed))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	gpus, neuron, inf := 0, 0, 0
	for _, n := range f.Nodes {
		gpus += len(n.GPUs)
		neuron += len(n.NeuronDevices)
	}
	for _, p := range f.Pods {
		if p.Inference != nil {
			inf++
		}
	}
	fmt.Fprintf(stdout, "%s: ok: %d nodes, %d GPUs, %d Neuron devices, %d pods (%d inference servers), %d resource claims\n",
		*path, len(f.Nodes), gpus, neuron, len(f.Pods), inf, len(f.Claims))
	return exitOK
}
