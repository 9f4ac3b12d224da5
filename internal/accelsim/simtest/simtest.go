// Package simtest loads the demo fleet for the simulator's own tests.
package simtest

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
)

// DemoScenarioPath is distributions/otelcol-accel/demo/fleet.yaml.
func DemoScenarioPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "distributions", "otelcol-accel", "demo", "fleet.yaml")
}

// DemoFleet builds the demo fleet with its own seed, or seed when non-zero.
func DemoFleet(t testing.TB, seed uint64) *fleet.Fleet {
	t.Helper()
	s, err := scenario.Load(DemoScenarioPath())
	if err != nil {
		t.Fatalf("demo scenario: %v", err)
	}
	if seed == 0 {
		seed = uint64(s.Seed)
	}
	f, err := fleet.Build(s, seed)
	if err != nil {
		t.Fatalf("build demo fleet: %v", err)
	}
	return f
}

// Fleet builds a fleet from scenario text.
func Fleet(t testing.TB, yaml string, seed uint64) *fleet.Fleet {
	t.Helper()
	s, err := scenario.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	f, err := fleet.Build(s, seed)
	if err != nil {
		t.Fatalf("build fleet: %v", err)
	}
	return f
}
