//go:build e2e

package e2e

import (
	"context"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// Two nodes: the one the agent starts on, and one with ten times its GPUs
// that the agent's sources are switched to while it runs.
const burstScenario = `
cluster: fault
seed: 6
nodes:
  - name: burst-small
    instance_type: p5.48xlarge
    auto_pods: {namespace: train, team: research, devices_per_pod: 4, workload: {profile: training-steady}}
  - name: burst-big
    instance_type: p5.48xlarge
    gpus: {count: 80}
    auto_pods: {namespace: train, team: research, devices_per_pod: 4, workload: {profile: training-steady}}
`

// agentMemoryLimitMiB is the memory_limiter's limit in agent.yaml: the
// agent's heap must stay under it, whatever the node sends.
const agentMemoryLimitMiB = 200

// TestFaultDeviceBurst: the node's dcgm-exporter and kubelet suddenly
// report ten times the GPUs (80 instead of 8, all held by pods). The agent
// stays healthy, exports every one of them with its pod, and its memory
// stays bounded.
func TestFaultDeviceBurst(t *testing.T) {
	t.Parallel()
	sim := startFaultSim(t, burstScenario)
	small, big := sim.Node(t, "burst-small"), sim.Node(t, "burst-big")
	dcgm := e2etest.StartSwitchProxy(t, small.DCGMExporterURL)
	kubelet := e2etest.StartUnixProxy(t, filepath.Join(sim.StateDir, "b.sock"), small.PodResourcesSocket)
	u, err := url.Parse(small.DCGMExporterURL)
	if err != nil {
		t.Fatal(err)
	}
	col, sink := startFaultAgent(t, sim, small.Name, e2etest.WriteConfig(t, "burst.yaml", `
receivers:
  dcgm:
    endpoint: `+dcgm.URL+u.Path+`
processors:
  accelerator_attributes:
    pod_resources_socket: `+kubelet.Path+`
`))
	watch := e2etest.WatchHealth(col, 250*time.Millisecond)
	defer watch.Stop()

	// attributed collects, per GPU of a node, whether a scrape carried it
	// with its pod.
	attributed := func(devices map[string]bool) func(pmetric.Metrics) {
		return func(md pmetric.Metrics) {
			if !carriesMetric(md, accelschema.MetricPower) {
				return
			}
			for id, rs := range resourcesByDevice(md) {
				if _, ok := devices[id]; ok && resourceAttr(rs[0], accelschema.AttrK8sPodName) != "" {
					devices[id] = true
				}
			}
		}
	}
	waitAll := func(what string, from int, devices map[string]bool) int {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		see := attributed(devices)
		next, err := sink.WaitMetrics(ctx, from, func(md pmetric.Metrics) bool {
			see(md)
			for _, ok := range devices {
				if !ok {
					return false
				}
			}
			return true
		})
		if err != nil {
			n := 0
			for _, ok := range devices {
				if ok {
					n++
				}
			}
			t.Fatalf("%s: %d of %d GPUs exported with their pod: %v", what, n, len(devices), err)
		}
		return next
	}
	gpus := func(n endpoints.Node) map[string]bool {
		m := map[string]bool{}
		for _, d := range n.Devices {
			m[d.ID] = false
		}
		return m
	}

	next := waitAll("8 GPUs", 0, gpus(small))
	before := ownMemory(t, col)

	dcgm.SetUpstream(t, big.DCGMExporterURL)
	kubelet.SetTarget(big.PodResourcesSocket)
	switched := time.Now()
	waitAll("80 GPUs after the burst", next, gpus(big))
	t.Logf("all 80 GPUs exported with their pods %s after the burst", time.Since(switched).Round(100*time.Millisecond))

	// Keep it up for a few more scrapes, watching memory.
	peak := int64(0)
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		peak = max(peak, ownMemory(t, col))
	}
	t.Logf("agent heap and stacks: %.1f MiB with 8 GPUs, at most %.1f MiB with 80", float64(before)/(1<<20), float64(peak)/(1<<20))
	if peak > agentMemoryLimitMiB<<20 {
		t.Errorf("agent memory reached %.1f MiB with 80 GPUs, over the memory_limiter's %d MiB", float64(peak)/(1<<20), agentMemoryLimitMiB)
	}
	if n := col.CountLines("data refused due to high memory usage"); n > 0 {
		t.Errorf("the memory limiter refused data %d times", n)
	}
	if bad := watch.Stop(); len(bad) > 0 {
		t.Errorf("the agent was unhealthy %d of %d polls: %v", len(bad), watch.Polls(), bad)
	}
	if err := col.Stop(30 * time.Second); err != nil {
		t.Errorf("agent did not stop cleanly: %v", err)
	}
}
