//go:build e2e

package e2e

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// The shipped alert rules, proven with Prometheus's own rule tester
// (promtool, Debian's prometheus package, installed by `make deps-debian`):
// testdata/rules_test.yaml feeds series on which each alert must fire and
// series on which it must not, and compares the alerts' labels and
// annotations. Unit tests in the alerts package check names and structure.
func TestAlertRulesWithPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: run `make deps-debian` (Debian's prometheus package)")
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "distributions", "otelcol-accel", "alerts")
	for _, args := range [][]string{
		{"check", "rules", "otelcol-accel.rules.yaml"},
		{"test", "rules", filepath.Join("testdata", "rules_test.yaml")},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
			continue
		}
		t.Logf("promtool %v:\n%s", args, out)
	}
}
