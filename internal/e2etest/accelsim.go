package e2etest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

// Sim is a running accelsim serve.
type Sim struct {
	*Process
	StateDir  string
	Endpoints *endpoints.File
}

// SimOptions says how to start the simulator.
type SimOptions struct {
	// Scenario defaults to the demo fleet.
	Scenario string
	// Speed is simulated seconds per wall second (default 10).
	Speed float64
	Seed  uint64
}

// StartAccelsim runs `accelsim serve` in a fresh state directory and waits
// for its ready line.
func StartAccelsim(t testing.TB, opts SimOptions) *Sim {
	t.Helper()
	if opts.Scenario == "" {
		opts.Scenario = simtest.DemoScenarioPath()
	}
	if opts.Speed == 0 {
		opts.Speed = 10
	}
	// Unix socket paths are limited to 107 bytes: keep the state dir short.
	dir, err := os.MkdirTemp("", "sim")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	args := []string{"serve", "--scenario", opts.Scenario, "--state-dir", dir, "--speed", ftoa(opts.Speed)}
	if opts.Seed != 0 {
		args = append(args, "--seed", utoa(opts.Seed))
	}
	p := StartProcess(t, "accelsim", AccelsimBinary(t), args, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.WaitForOutput(ctx, "accelsim ready"); err != nil {
		t.Fatalf("accelsim: %v\n%s", err, p.Output())
	}
	f, err := endpoints.Read(filepath.Join(dir, endpoints.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return &Sim{Process: p, StateDir: dir, Endpoints: f}
}

// Node returns the simulated node by name.
func (s *Sim) Node(t testing.TB, name string) endpoints.Node {
	t.Helper()
	for _, n := range s.Endpoints.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no simulated node %q", name)
	return endpoints.Node{}
}
