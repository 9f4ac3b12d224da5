package acceleratorgpuresetreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/kubetest"
	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratorgpuresetreceiver/internal/metadata"
)

// The agent reads its node as the agents' read-only account; the cluster
// end of the reset (the remediator's request and the report's use) is
// tested with the remediator in exporter/acceleratorremediationexporter.
const agent = "system:serviceaccount:otelcol-accel:otelcol-accel"

var server *kubetest.Server

func runWithKubeAPIServer(m *testing.M) int {
	if _, _, err := kubetest.Binaries(); err != nil {
		if kubetest.Required() {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			return 1
		}
		fmt.Fprintln(os.Stderr, "SKIP: the GPU reset receiver's tests need a real kube-apiserver:", err)
		return 0
	}
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	server, err = kubetest.Start(ctx, dir, kubetest.ServiceAccount("otelcol-accel", "otelcol-accel"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: kube-apiserver:", err)
		return 1
	}
	defer server.Stop()
	objs, err := kubetest.Decode(filepath.Join("..", "..", "distributions", "otelcol-accel", "kubernetes", "base", "rbac.yaml"))
	if err == nil {
		err = kubetest.Apply(ctx, server.Client(""), "otelcol-accel", objs...)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: the agents' RBAC:", err)
		return 1
	}
	code := m.Run()
	if code == 0 {
		_ = os.RemoveAll(dir)
	}
	return code
}

type fixture struct {
	r       *resetReceiver
	sink    *consumertest.LogsSink
	kubelet *prt.Server
	ran     string
}

// newFixture is a receiver on node with a fake kubelet and a reset script
// that exits with code.
func newFixture(t *testing.T, node string, code int) *fixture {
	t.Helper()
	_, err := server.Client("").CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{})
	require.NoError(t, err)
	sockDir, err := os.MkdirTemp("", "pr-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	kubelet := prt.New()
	socket := filepath.Join(sockDir, "kubelet.sock")
	require.NoError(t, kubelet.Start(socket))
	t.Cleanup(kubelet.Stop)
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "reset.sh")
	require.NoError(t, os.WriteFile(script, fmt.Appendf(nil, "#!/bin/sh\necho \"$@\" >> %s\necho 'Unable to reset GPU: in use by another client' >&2\nexit %d\n", ran, code), 0o700))

	cfg := createDefaultConfig().(*Config)
	cfg.NodeName = node
	cfg.Command = []string{"/bin/sh", script, "{uuid}", "{plan}"}
	cfg.PodResourcesSocket = socket
	sink := &consumertest.LogsSink{}
	r := newReceiver(cfg, receivertest.NewNopSettings(metadata.Type), sink)
	r.kube, err = k8sclient.NewClientForConfig(server.Config(agent))
	require.NoError(t, err)
	r.pods, err = podresources.New(socket)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.pods.Close() })
	return &fixture{r: r, sink: sink, kubelet: kubelet, ran: ran}
}

func (f *fixture) request(t *testing.T, value string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, DefaultPrefix+"/gpu-reset", value)
	_, err := server.Client("").CoreV1().Nodes().Patch(context.Background(), f.r.cfg.NodeName, "application/merge-patch+json", patch, metav1.PatchOptions{})
	require.NoError(t, err)
}

type report struct{ device, plan, outcome, detail string }

func (f *fixture) reports() []report {
	var out []report
	for _, ld := range f.sink.AllLogs() {
		rl := ld.ResourceLogs().At(0)
		lr := rl.ScopeLogs().At(0).LogRecords().At(0)
		dev, _ := rl.Resource().Attributes().Get(accelschema.AttrHWID)
		ev, _ := lr.Attributes().Get(accelschema.AttrEventName)
		if ev.Str() != accelschema.EventGPUReset {
			continue
		}
		p, _ := lr.Attributes().Get(accelschema.AttrRemediationPlanID)
		o, _ := lr.Attributes().Get(accelschema.AttrRemediationOutcome)
		out = append(out, report{dev.Str(), p.Str(), o.Str(), lr.Body().Str()})
	}
	return out
}

func (f *fixture) runs(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(f.ran)
	if os.IsNotExist(err) {
		return ""
	}
	require.NoError(t, err)
	return string(b)
}

// A failing reset command is reported failed with its output, once; the
// same request is not run again.
func TestFailedResetIsReportedOnce(t *testing.T) {
	f := newFixture(t, "agent-fail", 3)
	ctx := context.Background()
	f.r.poll(ctx)
	assert.Empty(t, f.reports(), "no request, nothing done")
	f.request(t, "GPU-f1@rp-0000000001")
	f.r.poll(ctx)
	f.r.poll(ctx)
	got := f.reports()
	require.Len(t, got, 1)
	assert.Equal(t, "GPU-f1", got[0].device)
	assert.Equal(t, "rp-0000000001", got[0].plan)
	assert.Equal(t, accelschema.RemediationOutcomeFailed, got[0].outcome)
	assert.Contains(t, got[0].detail, "exit status 3")
	assert.Contains(t, got[0].detail, "in use by another client")
	assert.Equal(t, "GPU-f1 rp-0000000001\n", f.runs(t), "run once, {uuid} and {plan} substituted")
}

// A request that is not <uuid>@<plan> never reaches the command; a GPU
// whose holders the kubelet cannot tell is not reset.
func TestMalformedRequestsAndUnknownHoldersRunNothing(t *testing.T) {
	f := newFixture(t, "agent-refuse", 0)
	ctx := context.Background()
	f.request(t, "GPU-1; rm -rf /@rp-1")
	f.r.poll(ctx)
	got := f.reports()
	require.Len(t, got, 1)
	assert.Equal(t, accelschema.RemediationOutcomeFailed, got[0].outcome)
	assert.Contains(t, got[0].detail, "is not <GPU uuid>@<plan id>: not run")

	// A pod with a DRA-claimed device may hold this GPU: it counts.
	dra := prt.Container("infer")
	dra.DynamicResources = append(dra.DynamicResources, prt.DRAClaim("team", "claim", prt.DRADevice("gpu.nvidia.com", "node", "gpu-3", "")))
	f.kubelet.SetPods(prt.Pod("team", "infer-0", dra))
	f.request(t, "GPU-d1@rp-3")
	f.r.poll(ctx)
	got = f.reports()
	require.Len(t, got, 2)
	assert.Equal(t, accelschema.RemediationOutcomeWaiting, got[1].outcome)
	assert.Contains(t, got[1].detail, "team/infer-0 (a DRA claim, which may be this GPU)")

	f.kubelet.Stop() // the kubelet goes away
	f.request(t, "GPU-u1@rp-2")
	f.r.poll(ctx)
	f.r.poll(ctx)
	got = f.reports()
	require.Len(t, got, 3, "one waiting report however many polls")
	assert.Equal(t, accelschema.RemediationOutcomeWaiting, got[2].outcome)
	assert.Contains(t, got[2].detail, "holders are unknown")
	assert.Empty(t, f.runs(t), "nothing ran")
}
