package acceleratorremediationexporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratorgpuresetreceiver"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

func stepOf(p *plan.Plan, kind xid.Step) plan.Step {
	for _, s := range p.Steps {
		if s.Kind == kind {
			return s
		}
	}
	return plan.Step{}
}

// resetAgent is the node side of a GPU reset: a fake kubelet PodResources
// server listing pods, and the agent's accelerator_gpu_reset receiver
// (as the agents' read-only account, against the same real
// kube-apiserver) running script as the reset command, whose reports go
// straight into h's intake, as the agent's pipeline would deliver them to
// the gateway.
func resetAgent(t *testing.T, h *harness, node, script string, pods ...*podresourcesv1.PodResources) *prt.Server {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "pr-") // short: unix socket paths are limited
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	kubelet := prt.New()
	kubelet.SetPods(pods...)
	socket := filepath.Join(sockDir, "kubelet.sock")
	require.NoError(t, kubelet.Start(socket))
	t.Cleanup(kubelet.Stop)

	kubeconfig, err := server.Kubeconfig(nodeAgent)
	require.NoError(t, err)
	f := acceleratorgpuresetreceiver.NewFactory()
	rcfg := f.CreateDefaultConfig().(*acceleratorgpuresetreceiver.Config)
	rcfg.APIConfig = k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig, KubeConfig: kubeconfig}
	rcfg.NodeName = node
	rcfg.Command = []string{"/bin/sh", script, "-r", "-i", "{uuid}"}
	rcfg.PollInterval = 50 * time.Millisecond
	rcfg.PodResourcesSocket = socket
	require.NoError(t, rcfg.Validate())
	toGateway := func(_ context.Context, ld plog.Logs) error { h.e.intake(ld); return nil }
	sink, err := consumer.NewLogs(toGateway)
	require.NoError(t, err)
	agent, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), rcfg, sink)
	require.NoError(t, err)
	require.NoError(t, agent.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, agent.Shutdown(context.Background())) })
	return kubelet
}

// resetScript writes a reset command that records its arguments in the
// returned file, prints out and exits with code.
func resetScript(t *testing.T, out string, code int) (script, ran string) {
	t.Helper()
	dir := t.TempDir()
	ran = filepath.Join(dir, "ran")
	script = filepath.Join(dir, "reset.sh")
	body := fmt.Sprintf("#!/bin/sh\necho \"$@\" >> %s\necho '%s'\nexit %d\n", ran, out, code)
	require.NoError(t, os.WriteFile(script, []byte(body), 0o700))
	return script, ran
}

// resetCluster makes node with the holder pod namespace/holder on it, and
// starts the remediator in automatic mode with gpu_reset on.
func resetCluster(t *testing.T, node, namespace string) (*kubetestClient, *harness, *clock) {
	t.Helper()
	needServer(t)
	k := admin()
	k.mkNode(t, node, "p5.48xlarge")
	k.mkNamespace(t, namespace)
	k.mkPod(t, namespace, "holder", node, nil)
	clk := &clock{t: t0}
	cfg := testConfig()
	cfg.Mode = engine.Automatic
	cfg.GPUReset.Enabled = true
	return k, start(t, cfg, clk, nil), clk
}

// The node-local GPU reset end to end: the remediator asks through the
// node annotation; the agent sees the request, waits while the kubelet
// still lists the evicted holder, then runs the reset command once and
// reports; the report reaches the remediator's intake and the plan
// finishes.
func TestGPUResetThroughTheNodeAgent(t *testing.T) {
	k, h, clk := resetCluster(t, "reset-1", "team-reset")
	script, ran := resetScript(t, "GPU 00000000:53:00.0 was successfully reset.", 0)
	// The kubelet's PodResources: the holder has the GPU.
	kubelet := resetAgent(t, h, "reset-1", script,
		prt.Pod("team-reset", "holder", prt.Container("train", prt.Devices("nvidia.com/gpu", "GPU-r1"))))

	h.send(event{node: "reset-1", device: "GPU-r1", pod: "holder", namespace: "team-reset", xid: 48})
	h.tick()
	p := h.only()
	assert.Equal(t, plan.StepSucceeded, stepOf(p, xid.StepEvictHolders).State)
	assert.True(t, k.evicted(t, "team-reset", "holder"))
	reset := stepOf(p, xid.StepResetGPU)
	assert.Equal(t, plan.StepPending, reset.State)
	assert.Contains(t, reset.Error, "asked the agent on reset-1 to reset GPU-r1")
	assert.Equal(t, "GPU-r1@"+p.ID, k.node(t, "reset-1").Annotations[DefaultPrefix+"/gpu-reset"])

	report := func() *plan.ResetReport { got, _ := h.e.store.Get(p.ID); return got.Reset }
	waitFor(t, "the agent to report that the GPU is held", func() bool { r := report(); return r != nil && r.Outcome == accelschema.RemediationOutcomeWaiting })
	assert.Contains(t, report().Detail, "held by team-reset/holder")
	clk.add(time.Minute)
	h.tick()
	reset = stepOf(h.only(), xid.StepResetGPU)
	assert.Equal(t, plan.StepPending, reset.State)
	assert.Contains(t, reset.Error, "held by team-reset/holder")
	_, err := os.Stat(ran)
	assert.True(t, os.IsNotExist(err), "no reset while the GPU is held")

	kubelet.SetPods() // the holder's containers are gone
	waitFor(t, "the agent to reset the GPU", func() bool { r := report(); return r != nil && r.Outcome == accelschema.RemediationOutcomeSucceeded })
	clk.add(time.Minute)
	h.tick()
	got := h.only()
	assert.Equal(t, plan.Succeeded, got.State, got.Reason)
	reset = stepOf(got, xid.StepResetGPU)
	assert.Equal(t, plan.StepSucceeded, reset.State)
	assert.Contains(t, reset.Outcome, "was successfully reset")
	_, annotated := k.node(t, "reset-1").Annotations[DefaultPrefix+"/gpu-reset"]
	assert.False(t, annotated, "the request is removed once done")
	out, err := os.ReadFile(ran)
	require.NoError(t, err)
	assert.Equal(t, "-r -i GPU-r1\n", string(out), "the command ran once, with the GPU's UUID")
	assert.Equal(t, 1, strings.Count(string(out), "\n"))
}

// A reset the agent reports failed fails the step and the plan, and
// withdraws the request: left on the node, it would block every later
// plan's reset there as "another plan's reset".
func TestGPUResetThatFailsWithdrawsItsRequest(t *testing.T) {
	k, h, clk := resetCluster(t, "reset-2", "team-reset2")
	script, ran := resetScript(t, "Unable to reset GPU 00000000:54:00.0: In use by another client", 1)
	resetAgent(t, h, "reset-2", script) // nothing holds the GPU on the kubelet's side

	h.send(event{node: "reset-2", device: "GPU-r2", pod: "holder", namespace: "team-reset2", xid: 48})
	h.tick()
	p := h.only()
	assert.Equal(t, "GPU-r2@"+p.ID, k.node(t, "reset-2").Annotations[DefaultPrefix+"/gpu-reset"])

	report := func() *plan.ResetReport { got, _ := h.e.store.Get(p.ID); return got.Reset }
	waitFor(t, "the agent to report the failed reset", func() bool { r := report(); return r != nil && r.Outcome == accelschema.RemediationOutcomeFailed })
	clk.add(time.Minute)
	h.tick()
	_, annotated := k.node(t, "reset-2").Annotations[DefaultPrefix+"/gpu-reset"]
	assert.False(t, annotated, "a failed reset withdraws its request at once")
	got := h.only()
	assert.Equal(t, plan.Failed, got.State, got.Reason)
	reset := stepOf(got, xid.StepResetGPU)
	assert.Equal(t, plan.StepFailed, reset.State, "no retry: the agent would not act on the same request again")
	assert.Equal(t, 1, reset.Attempts)
	assert.Contains(t, reset.Error, "could not reset GPU-r2")
	out, err := os.ReadFile(ran)
	require.NoError(t, err)
	assert.Equal(t, "-r -i GPU-r2\n", string(out), "the command ran once")
}
