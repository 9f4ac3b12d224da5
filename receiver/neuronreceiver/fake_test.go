package neuronreceiver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// fakeNeuronMonitor is the path of testdata/fakeneuronmonitor once built.
var fakeNeuronMonitor string

// buildFakeNeuronMonitor builds the fake neuron-monitor (TestMain runs it).
// The binary goes to a directory named after the source's hash, so repeated
// runs reuse it and nothing accumulates.
func buildFakeNeuronMonitor() {
	src, err := os.ReadFile(filepath.Join("testdata", "fakeneuronmonitor", "main.go"))
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(src)
	dir := filepath.Join(os.TempDir(), "otelcol-accel-fakeneuronmonitor-"+hex.EncodeToString(sum[:8]))
	bin := filepath.Join(dir, "neuron-monitor")
	if _, err := os.Stat(bin); err == nil {
		fakeNeuronMonitor = bin
		return
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		panic(err)
	}
	// go test puts $GOROOT/bin first on PATH and sets GOROOT for the test
	// binary, so the toolchain that runs the tests is found here.
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = "go"
		if root := os.Getenv("GOROOT"); root != "" {
			gobin = filepath.Join(root, "bin", "go")
		}
	}
	tmp := bin + ".tmp" + strconv.Itoa(os.Getpid())
	cmd := exec.Command(gobin, "build", "-o", tmp, "./testdata/fakeneuronmonitor")
	if out, err := cmd.CombinedOutput(); err != nil {
		panic(fmt.Sprintf("building the fake neuron-monitor: %v\n%s", err, out))
	}
	if err := os.Rename(tmp, bin); err != nil {
		panic(err)
	}
	fakeNeuronMonitor = bin
}
