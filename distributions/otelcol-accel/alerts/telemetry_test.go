package alerts

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"go.yaml.in/yaml/v3"
)

// selfTelemetry reads the collector-telemetry counters our components
// declare in their metadata.yaml (mdatagen's telemetry: section) and returns
// each under the name the collector's own Prometheus endpoint gives it,
// with its attributes as labels. The name is otelcol_<key> with no unit or
// _total suffix: seen on the agent's :8888 (collector v0.165) as
// `otelcol_receiver_dcgm_scrapes_failed{source="nvml"} 11` and
// `otelcol_receiver_neuron_monitor_restarts 4`.
func selfTelemetry(t *testing.T) map[string][]string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	var paths []string
	for _, kind := range []string{"receiver", "processor", "exporter"} {
		m, err := filepath.Glob(filepath.Join(root, kind, "*", "metadata.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		t.Fatal("no component metadata.yaml found")
	}
	out := map[string][]string{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var md struct {
			Telemetry struct {
				Metrics map[string]struct {
					Enabled    bool     `yaml:"enabled"`
					Attributes []string `yaml:"attributes"`
				} `yaml:"metrics"`
			} `yaml:"telemetry"`
		}
		if err := yaml.Unmarshal(raw, &md); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for name, m := range md.Telemetry.Metrics {
			if m.Enabled {
				out["otelcol_"+name] = m.Attributes
			}
		}
	}
	return out
}
