package e2etest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// RepoRoot is the repository root, found from this file's location so that
// tests work from any package directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// CollectorBinary is the built distribution: $OTELCOL_ACCEL_BIN, else
// _build/otelcol-accel. A missing binary fails the test: end-to-end tests
// must never pass without running the product.
func CollectorBinary(t testing.TB) string {
	return binary(t, "OTELCOL_ACCEL_BIN", filepath.Join(RepoRoot(), "_build", "otelcol-accel"), "make dist")
}

// AgentBinary is the node-agent distribution (builder-config-agent.yaml):
// $OTELCOL_ACCEL_AGENT_BIN, else _build/otelcol-accel-agent.
func AgentBinary(t testing.TB) string {
	return binary(t, "OTELCOL_ACCEL_AGENT_BIN", filepath.Join(RepoRoot(), "_build", "otelcol-accel-agent"), "make dist")
}

// AccelsimBinary is the fleet simulator: $ACCELSIM_BIN, else _build/accelsim.
func AccelsimBinary(t testing.TB) string {
	return binary(t, "ACCELSIM_BIN", filepath.Join(RepoRoot(), "_build", "accelsim"), "make accelsim")
}

func binary(t testing.TB, env, fallback, how string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		path = fallback
	}
	if info, err := os.Stat(path); err != nil || info.IsDir() {
		t.Fatalf("%s not found (set $%s or run `%s` first)", path, env, how)
	}
	return path
}

// ConfigPath is a file under distributions/otelcol-accel/config.
func ConfigPath(name string) string {
	return filepath.Join(RepoRoot(), "distributions", "otelcol-accel", "config", name)
}
