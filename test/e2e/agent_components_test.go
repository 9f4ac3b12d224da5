//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The node agent (builder-config-agent.yaml) carries exactly what its
// manifest lists, which is exactly what the shipped node configs need, and
// none of what only a gateway runs. Its `components` output is the binary's
// own account of what ocb compiled in: a component added to the manifest
// without a reason, or one pulled out from under agent.yaml, fails here.
func TestAgentBinaryHasExactlyItsManifestsComponents(t *testing.T) {
	out, err := exec.Command(e2etest.AgentBinary(t), "components").Output()
	if err != nil {
		t.Fatalf("components: %v", err)
	}
	type entry struct {
		Name   string `yaml:"name"`
		Scheme string `yaml:"scheme"`
		Module string `yaml:"module"`
	}
	var doc struct {
		Receivers  []entry `yaml:"receivers"`
		Processors []entry `yaml:"processors"`
		Exporters  []entry `yaml:"exporters"`
		Connectors []entry `yaml:"connectors"`
		Extensions []entry `yaml:"extensions"`
		Providers  []entry `yaml:"providers"`
	}
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("components output is not YAML: %v\n%s", err, out)
	}
	listed := map[string][]entry{
		"receivers": doc.Receivers, "processors": doc.Processors, "exporters": doc.Exporters,
		"connectors": doc.Connectors, "extensions": doc.Extensions, "providers": doc.Providers,
	}

	raw, err := os.ReadFile(filepath.Join(e2etest.RepoRoot(), "builder-config-agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest map[string]any
	if err := yaml.Unmarshal(raw, &manifest); err != nil {
		t.Fatalf("builder-config-agent.yaml: %v", err)
	}

	// What the node configs use, by name (and what only a node can run);
	// the gateway-only components that must stay out of the node's
	// executable.
	want := map[string][]string{
		// accelerator_gpu_reset: the remediator's node-local GPU reset,
		// which only an agent can do (off unless an overlay enables it).
		"receivers":  {"accelerator_gpu_reset", "dcgm", "inference", "neuron", "otlp"},
		"processors": {"accelerator_attributes", "accelerator_cost", "batch", "memory_limiter"},
		"exporters":  {"debug", "otlp_grpc", "otlp_http", "prometheus"},
		// k8s_token_auth: the agent's service account token to the gateway.
		"extensions": {"file_storage", "healthcheckv2", "k8s_token_auth", "pprof", "zpages"},
		"providers":  {"env", "file", "http", "https", "yaml"},
		"connectors": nil,
	}
	for kind, names := range want {
		var got, modules []string
		for _, e := range listed[kind] {
			got = append(got, e.Name+e.Scheme)
			modules = append(modules, e.Module)
		}
		slices.Sort(got)
		if !slices.Equal(got, names) {
			t.Errorf("%s: the agent binary has %v, want exactly %v", kind, got, names)
		}
		// Module by module, the binary is the manifest: every gomod line
		// compiled in once, nothing else.
		var fromManifest []string
		entries, _ := manifest[kind].([]any)
		for _, e := range entries {
			m, _ := e.(map[string]any)
			gomod, _ := m["gomod"].(string)
			fromManifest = append(fromManifest, gomod)
		}
		slices.Sort(modules)
		slices.Sort(fromManifest)
		if !slices.Equal(modules, fromManifest) {
			t.Errorf("%s: the binary's modules\n  %s\ndiffer from builder-config-agent.yaml's\n  %s",
				kind, strings.Join(modules, "\n  "), strings.Join(fromManifest, "\n  "))
		}
	}
	for _, gatewayOnly := range []string{"prometheus_remote_write", "cloudwatch_emf", "accelerator_insights", "accelerator_remediation", "sigv4auth"} {
		for _, kind := range []string{"exporters", "extensions"} {
			for _, e := range listed[kind] {
				if e.Name == gatewayOnly {
					t.Errorf("the agent binary carries the gateway-only %s %s", kind, gatewayOnly)
				}
			}
		}
	}
	for _, e := range listed["receivers"] {
		if e.Name == "prometheus" {
			t.Error("the agent binary carries the prometheus receiver (a gateway's, with its service-discovery dependencies)")
		}
	}
}
