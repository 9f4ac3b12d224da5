package manifests

import (
	"path/filepath"
	"runtime"
)

func distDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "distributions", "otelcol-accel")
}

func configDir() string     { return filepath.Join(distDir(), "config") }
func kubernetesDir() string { return filepath.Join(distDir(), "kubernetes") }
