//go:build e2e

package e2e

import (
	"os/exec"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The built binary carries every component the distribution promises: the
// collector core and contrib set users configure by name, and our own.
// `components` is the binary's own account of what ocb compiled in, so a
// line dropped from builder-config.yaml fails here, not in a user's config.
func TestBinaryListsEveryPromisedComponent(t *testing.T) {
	out, err := exec.Command(e2etest.CollectorBinary(t), "components").Output()
	if err != nil {
		t.Fatalf("components: %v", err)
	}
	var listed struct {
		Receivers  []struct{ Name string }   `yaml:"receivers"`
		Processors []struct{ Name string }   `yaml:"processors"`
		Exporters  []struct{ Name string }   `yaml:"exporters"`
		Extensions []struct{ Name string }   `yaml:"extensions"`
		Providers  []struct{ Scheme string } `yaml:"providers"`
	}
	if err := yaml.Unmarshal(out, &listed); err != nil {
		t.Fatalf("components output is not YAML: %v\n%s", err, out)
	}
	names := func(list []struct{ Name string }) map[string]bool {
		m := map[string]bool{}
		for _, c := range list {
			m[c.Name] = true
		}
		return m
	}
	schemes := map[string]bool{}
	for _, p := range listed.Providers {
		schemes[p.Scheme] = true
	}
	want := []struct {
		kind string
		have map[string]bool
		need []string
	}{
		{"receivers", names(listed.Receivers), []string{"otlp", "prometheus", "dcgm", "neuron", "inference", "accelerator_k8s"}},
		{"processors", names(listed.Processors), []string{"batch", "memory_limiter", "accelerator_attributes", "accelerator_cost", "accelerator_sender"}},
		{"exporters", names(listed.Exporters), []string{"debug", "otlp_grpc", "otlp_http", "prometheus", "prometheus_remote_write", "cloudwatch_emf"}},
		{"extensions", names(listed.Extensions), []string{"healthcheckv2", "pprof", "zpages", "file_storage", "sigv4auth", "bearertokenauth", "oidc", "k8s_token_auth"}},
		{"providers", schemes, []string{"env", "file", "yaml", "http", "https"}},
	}
	for _, w := range want {
		var missing []string
		for _, n := range w.need {
			if !w.have[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			var have []string
			for n := range w.have {
				have = append(have, n)
			}
			sort.Strings(have)
			t.Errorf("%s: missing %s (the binary has %s)", w.kind, strings.Join(missing, ", "), strings.Join(have, ", "))
		}
	}
}
