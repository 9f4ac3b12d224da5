package manifests

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated ConfigMaps from the config files")

func TestGeneratedConfigMapsMatchConfigs(t *testing.T) {
	files, err := renderConfigMaps()
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range files {
		path := filepath.Join(kubernetesDir(), rel)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run `make manifests`)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date with distributions/otelcol-accel/config: run `make manifests`", rel)
		}
	}
}
