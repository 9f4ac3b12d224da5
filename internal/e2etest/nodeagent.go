package e2etest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/agentconfig"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
)

// NodeOverlay writes the generated overlay that points an agent at one
// simulated node (its dcgm-exporter or neuron-monitor, kubelet socket,
// API, inference servers) and returns its path. Layer it last.
func NodeOverlay(t testing.TB, f *endpoints.File, node endpoints.Node) string {
	t.Helper()
	overlay, err := agentconfig.Overlay(f, node)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), node.Name+".yaml")
	if err := os.WriteFile(path, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// WriteConfig writes a configuration overlay written in the test and
// returns its path.
func WriteConfig(t testing.TB, name, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
