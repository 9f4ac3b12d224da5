package acceleratorcostprocessor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
)

// fenced returns the first code block of the given language in README.md.
func fenced(t *testing.T, lang string) string {
	t.Helper()
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	doc := string(raw)
	start := strings.Index(doc, "```"+lang+"\n")
	require.GreaterOrEqual(t, start, 0, "README.md has no %s block", lang)
	body := doc[start+len(lang)+4:]
	return body[:strings.Index(body, "```")]
}

// The README's examples work as written.
func TestReadmeExamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.csv")
	require.NoError(t, os.WriteFile(path, []byte(fenced(t, "csv")), 0o600))
	table, err := pricing.Load([]string{path}, pricing.Options{})
	require.NoError(t, err)
	p5, _ := table.Lookup("p5.48xlarge", "", "")
	require.InDelta(t, 55.04/8*0.4, p5.AcceleratorHourly(), 1e-9)
	onprem, m := table.Lookup("", "dc-paris", "NVIDIA H100 80GB HBM3")
	require.Equal(t, pricing.ModelMatch, m)
	require.InDelta(t, 2.10, onprem.AcceleratorHourly(), 1e-9)

	var collector map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(fenced(t, "yaml")), &collector))
	section := collector["processors"].(map[string]any)["accelerator_cost"].(map[string]any)
	section["pricing"].(map[string]any)["files"] = []any{path}
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(section).Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	require.Equal(t, "file_storage/cost", cfg.Baselines.Storage.String())
}
