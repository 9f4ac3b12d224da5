//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// One node whose dcgm-exporter does not label pods, so who holds a GPU can
// only come from the kubelet's PodResources socket.
const kubeletScenario = `
cluster: fault
seed: 3
nodes:
  - name: gpu-kubelet
    instance_type: p5.48xlarge
    dcgm_exporter: {kubernetes: false}
pods:
  - name: trainer-0
    namespace: research
    node: gpu-kubelet
    team: research
    owner: {kind: Job, name: trainer}
    workload: {profile: training-steady}
    containers:
      - name: main
        gpus: [0, 1, 2, 3]
`

const attributesProcessor = "processor:accelerator_attributes"

// TestFaultKubeletSocketRecreated: the kubelet's PodResources socket is
// removed (as a kubelet restart does) and, a while later, created again.
// The agent stays healthy throughout, says the source is failing, drops
// the attribution it can no longer vouch for, and attributes GPUs to their
// pods again once the socket is back.
func TestFaultKubeletSocketRecreated(t *testing.T) {
	t.Parallel()
	sim := startFaultSim(t, kubeletScenario)
	node := sim.Node(t, "gpu-kubelet")
	var held string
	for _, d := range node.Devices {
		if len(d.Holders) > 0 && d.Holders[0].Pod == "trainer-0" {
			held = d.ID
			break
		}
	}
	if held == "" {
		t.Fatalf("no GPU held by trainer-0 in %+v", node.Devices)
	}
	// The agent reads the socket through a path the test controls.
	proxy := e2etest.StartUnixProxy(t, filepath.Join(sim.StateDir, "k.sock"), node.PodResourcesSocket)
	col, sink := startFaultAgent(t, sim, node.Name, e2etest.WriteConfig(t, "socket.yaml",
		"processors:\n  accelerator_attributes:\n    pod_resources_socket: "+proxy.Path+"\n"))
	watch := e2etest.WatchHealth(col, 250*time.Millisecond, attributesProcessor)
	defer watch.Stop()

	podOf := func(md pmetric.Metrics) (string, bool) {
		rs := resourcesByDevice(md)[held]
		if len(rs) == 0 || !carriesMetric(md, accelschema.MetricPower) {
			return "", false
		}
		return resourceAttr(rs[0], accelschema.AttrK8sPodName), true
	}
	wait := func(what string, from int, timeout time.Duration, want func(pod string) bool) int {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		next, err := sink.WaitMetrics(ctx, from, func(md pmetric.Metrics) bool {
			pod, ok := podOf(md)
			return ok && want(pod)
		})
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		return next
	}

	next := wait("GPU "+held+" attributed to trainer-0", 0, 60*time.Second, func(p string) bool { return p == "trainer-0" })

	removed := time.Now()
	proxy.Remove()
	// The last answer is kept for a few refreshes (a kubelet restart is
	// short), then the GPU passes unattributed.
	next = wait("attribution to lapse without the socket", next, 60*time.Second, func(p string) bool { return p == "" })
	e2etest.Await(t, 10*time.Second, "the processor to report the socket missing", statusSeen(watch, attributesProcessor, "StatusRecoverableError"))

	t.Logf("attribution lapsed %s after the socket was removed", time.Since(removed).Round(time.Second))
	if err := proxy.Serve(); err != nil {
		t.Fatal(err)
	}
	recreated := time.Now()
	wait("attribution to come back with the socket", next, 60*time.Second, func(p string) bool { return p == "trainer-0" })
	t.Logf("attribution came back %s after the socket was recreated", time.Since(recreated).Round(100*time.Millisecond))
	e2etest.Await(t, 30*time.Second, "the processor to report it recovered", componentStatus(col, attributesProcessor, "StatusOK"))
	if n := col.CountLines("does not exist: mount the host directory"); n != 1 {
		t.Errorf("the missing socket was logged %d times, want once (rate-limited)", n)
	}
	if bad := watch.Stop(); len(bad) > 0 {
		t.Errorf("the agent was unhealthy %d of %d polls: %v", len(bad), watch.Polls(), bad)
	}
	if err := col.Stop(30 * time.Second); err != nil {
		t.Errorf("agent did not stop cleanly: %v", err)
	}
}
