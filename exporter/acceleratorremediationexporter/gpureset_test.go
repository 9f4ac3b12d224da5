package acceleratorremediationexporter

import (
	"context"
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
)

func stepOf(p *plan.Plan, kind xid.Step) plan.Step {
	for _, s := range p.Steps {
		if s.Kind == kind {
			return s
		}
	}
	return plan.Step{}
}

// The node-local GPU reset end to end: the remediator asks through the
// node annotation; the agent's accelerator_gpu_reset receiver (as the
// agents' read-only account, against the same real kube-apiserver) sees
// the request, waits while the kubelet (a fake PodResources server) still
// lists the evicted holder, then runs the reset command (a script) once
// and reports; the report reaches the remediator's intake as the agent's
// pipeline would deliver it, and the plan finishes.
func TestGPUResetThroughTheNodeAgent(t *testing.T) {
	needServer(t)
	k := admin()
	k.mkNode(t, "reset-1", "p5.48xlarge")
	k.mkNamespace(t, "team-reset")
	k.mkPod(t, "team-reset", "holder", "reset-1", nil)

	// The kubelet's PodResources: the holder has the GPU.
	sockDir, err := os.MkdirTemp("", "pr-") // short: unix socket paths are limited
	require.NoError(t, err)
	defer os.RemoveAll(sockDir)
	kubelet := prt.New()
	kubelet.SetPods(prt.Pod("team-reset", "holder", prt.Container("train", prt.Devices("nvidia.com/gpu", "GPU-r1"))))
	socket := filepath.Join(sockDir, "kubelet.sock")
	require.NoError(t, kubelet.Start(socket))
	defer kubelet.Stop()

	// The reset command: a script that records its arguments.
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "reset.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho \"$@\" >> "+ran+"\necho 'GPU 00000000:53:00.0 was successfully reset.'\n"), 0o700))

	clk := &clock{t: t0}
	cfg := testConfig()
	cfg.Mode = engine.Automatic
	cfg.GPUReset.Enabled = true
	h := start(t, cfg, clk, nil)

	// The agent: its pipeline carries the report to the gateway, here
	// straight into the remediator's intake.
	kubeconfig, err := server.Kubeconfig(nodeAgent)
	require.NoError(t, err)
	f := acceleratorgpuresetreceiver.NewFactory()
	rcfg := f.CreateDefaultConfig().(*acceleratorgpuresetreceiver.Config)
	rcfg.APIConfig = k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig, KubeConfig: kubeconfig}
	rcfg.NodeName = "reset-1"
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
	defer func() { require.NoError(t, agent.Shutdown(context.Background())) }()

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
	_, err = os.Stat(ran)
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
