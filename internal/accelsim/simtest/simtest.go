// Package simtest loads the demo fleet (and a Trainium2 fleet) for the
// simulator's own tests.
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

// Trn2ScenarioPath is a one-node Trainium2 scenario for tests of the
// Trn2-only neuron-monitor fields.
func Trn2ScenarioPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "trn2.yaml")
}

// DemoFleet builds the demo fleet with its own seed, or seed when non-zero.
func DemoFleet(t testing.TB, seed uint64) *fleet.Fleet {
	t.Helper()
	return loadFleet(t, DemoScenarioPath(), seed)
}

// Trn2Fleet builds the Trainium2 test fleet.
func Trn2Fleet(t testing.TB) *fleet.Fleet {
	t.Helper()
	return loadFleet(t, Trn2ScenarioPath(), 0)
}

func loadFleet(t testing.TB, path string, seed uint64) *fleet.Fleet {
	t.Helper()
	s, err := scenario.Load(path)
	if err != nil {
		t.Fatalf("scenario %s: %v", path, err)
	}
	if seed == 0 {
		seed = uint64(s.Seed)
	}
	f, err := fleet.Build(s, seed)
	if err != nil {
		t.Fatalf("build fleet from %s: %v", path, err)
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
