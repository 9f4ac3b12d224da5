//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

const smallNVIDIANode = `
cluster: fault
seed: 4
nodes:
  - name: gpu-small
    instance_type: g6.xlarge
pods:
  - name: notebook-0
    namespace: data-science
    node: gpu-small
    team: data-science
    workload: {profile: idle}
    containers:
      - name: jupyter
        gpus: [0]
`

// A neuron-monitor that dies at once, as one does on a node whose driver
// is missing: it notes each start, complains on stderr and exits 1.
const crashingNeuronMonitor = `#!/bin/sh
date +%s.%N >> "$0.starts"
echo "neuron-monitor: fatal: failed to open /dev/neuron0: No such file or directory (pid $$)" >&2
exit 1
`

const neuronReceiver = "receiver:neuron"

// TestFaultNeuronMonitorCrashLoop: neuron-monitor exits as soon as it
// starts, again and again. The agent stays healthy, restarts it with
// growing backoff (not in a tight loop), says so in a rate-limited log,
// and the node's other sources keep flowing.
func TestFaultNeuronMonitorCrashLoop(t *testing.T) {
	t.Parallel()
	sim := startFaultSim(t, smallNVIDIANode)
	script := filepath.Join(t.TempDir(), "neuron-monitor")
	if err := os.WriteFile(script, []byte(crashingNeuronMonitor), 0o755); err != nil {
		t.Fatal(err)
	}
	col, sink := startFaultAgent(t, sim, "gpu-small", e2etest.WriteConfig(t, "neuron.yaml", `
receivers:
  neuron:
    command: `+script+`
service:
  pipelines:
    metrics:
      receivers: [dcgm, neuron, inference]
    logs:
      receivers: [dcgm, neuron]
`))
	watch := e2etest.WatchHealth(col, 250*time.Millisecond, neuronReceiver)
	defer watch.Stop()

	const observe = 16 * time.Second
	time.Sleep(observe)
	// The rest of the node keeps flowing during the crash loop.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, from := sink.Metrics(0)
	if _, err := sink.WaitMetrics(ctx, from, func(md pmetric.Metrics) bool { return carriesMetric(md, accelschema.MetricPower) }); err != nil {
		t.Errorf("no GPU metrics while neuron-monitor crash-loops: %v", err)
	}

	starts := readStarts(t, script+".starts")
	t.Logf("neuron-monitor started %d times in %s; gaps %v", len(starts), observe, startGaps(starts))
	// Backoff 1 s doubling: 0, 1, 3, 7, 15 s. A tight loop would be
	// hundreds.
	if len(starts) < 3 || len(starts) > 6 {
		t.Errorf("neuron-monitor started %d times in %s, want 3 to 6 (restarts with backoff 1s, 2s, 4s, 8s)", len(starts), observe)
	}
	g := startGaps(starts)
	for i := 1; i < len(g); i++ {
		if g[i] < 1.5*g[i-1] {
			t.Errorf("restart gaps %v do not grow (gap %d is %.2fs after %.2fs)", g, i, g[i], g[i-1])
		}
	}
	if !watch.Seen(neuronReceiver, "StatusRecoverableError") {
		t.Error("the neuron receiver never reported a recoverable error")
	}
	for _, line := range []string{"exited after", "neuron-monitor stderr"} {
		if n := col.CountLines(line); n != 1 {
			t.Errorf("%q logged %d times for %d exits, want once (rate-limited)", line, n, len(starts))
		}
	}
	if bad := watch.Stop(); len(bad) > 0 {
		t.Errorf("the agent was unhealthy %d of %d polls: %v", len(bad), watch.Polls(), bad)
	}
	if err := col.Stop(30 * time.Second); err != nil {
		t.Errorf("agent did not stop cleanly: %v", err)
	}
}

func readStarts(t *testing.T, path string) []float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("neuron-monitor never ran: %v", err)
	}
	var out []float64
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("%s: %q", path, f)
		}
		out = append(out, v)
	}
	return out
}

func startGaps(ts []float64) []float64 {
	var g []float64
	for i := 1; i < len(ts); i++ {
		g = append(g, float64(int((ts[i]-ts[i-1])*100))/100)
	}
	return g
}
