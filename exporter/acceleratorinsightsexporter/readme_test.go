package acceleratorinsightsexporter

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"
)

// fencedYAML returns the README's yaml blocks.
func fencedYAML(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	var out []string
	for _, part := range strings.Split(string(raw), "```yaml\n")[1:] {
		out = append(out, part[:strings.Index(part, "```")])
	}
	return out
}

// The README's examples are valid configurations of this exporter.
func TestReadmeExamples(t *testing.T) {
	blocks := fencedYAML(t)
	require.Len(t, blocks, 2)
	for i, want := range []string{BackendMemory, BackendPrometheus} {
		var doc map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(blocks[i]), &doc))
		for _, section := range doc["exporters"].(map[string]any) {
			cfg := createDefaultConfig().(*Config)
			require.NoError(t, confmap.NewFromStringMap(section.(map[string]any)).Unmarshal(cfg))
			require.NoError(t, cfg.Validate())
			require.Equal(t, want, cfg.Backend)
		}
	}
}
