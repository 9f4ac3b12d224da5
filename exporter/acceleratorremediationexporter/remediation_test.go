package acceleratorremediationexporter

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/escalate"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/kube"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
	"github.com/otelcol-accel/otelcol-accel/internal/filestoragetest"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func stepStates(p *plan.Plan) map[xid.Step]plan.StepState {
	out := map[xid.Step]plan.StepState{}
	for _, s := range p.Steps {
		out[s.Kind] = s.State
	}
	return out
}

func condition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == "AcceleratorHealthy" {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// counter returns the value of the component's counter with attributes.
func counter(t *testing.T, h *harness, name string, kv ...attribute.KeyValue) int64 {
	t.Helper()
	m, err := h.tel.GetMetric(name)
	if err != nil {
		return 0
	}
	want := attribute.NewSet(kv...)
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if dp.Attributes.Equals(&want) {
			return dp.Value
		}
	}
	return 0
}

func gauge(t *testing.T, h *harness, name string, kv ...attribute.KeyValue) int64 {
	t.Helper()
	m, err := h.tel.GetMetric(name)
	require.NoError(t, err)
	want := attribute.NewSet(kv...)
	for _, dp := range m.Data.(metricdata.Gauge[int64]).DataPoints {
		if dp.Attributes.Equals(&want) {
			return dp.Value
		}
	}
	return -1
}

// The default: a plan is made, logged and shown, and nothing changes.
func TestRecommendModeChangesNothing(t *testing.T) {
	needServer(t)
	k := admin()
	k.mkNode(t, "rec-1", "p5.48xlarge")
	h := start(t, testConfig(), &clock{t: t0}, nil)
	h.send(event{node: "rec-1", device: "GPU-1", xid: 79})
	h.tick()
	p := h.only()
	assert.Equal(t, plan.Recommended, p.State)
	assert.Contains(t, p.Reason, "set_node_condition is in recommend mode")
	n := k.node(t, "rec-1")
	assert.Nil(t, condition(n))
	assert.False(t, n.Spec.Unschedulable)
	assert.Equal(t, 1, h.logs.FilterMessage("accelerator_remediation: plan created").Len())
	assert.Equal(t, int64(1), gauge(t, h, "otelcol_exporter_remediation_plans", attribute.String("state", "recommended")))
}

// The demo's path: an XID on a held device makes a plan that waits; the
// annotation approves it; the node gets its condition and Event, and only
// the holder of the failed device is evicted.
func TestApproveModeActsOnTheAnnotation(t *testing.T) {
	needServer(t)
	k := admin()
	k.mkNode(t, "appr-1", "p5.48xlarge")
	k.mkNamespace(t, "team-appr")
	k.mkPod(t, "team-appr", "train-0", "appr-1", nil)
	k.mkPod(t, "team-appr", "train-1", "appr-1", nil)
	clk := &clock{t: t0}
	h := start(t, approveMode(testConfig()), clk, nil)
	h.send(event{node: "appr-1", device: "GPU-48", pod: "train-0", namespace: "team-appr", xid: 48})
	h.send(event{node: "appr-1", device: "GPU-48", pod: "train-0", namespace: "team-appr", xid: 48}) // recurs: same plan
	h.tick()
	p := h.only()
	assert.Equal(t, plan.AwaitingApproval, p.State)
	assert.Nil(t, condition(k.node(t, "appr-1")), "nothing runs before the approval")

	clk.add(time.Minute)
	k.approve(t, "appr-1", p.ID)
	h.tick()
	p = h.only()
	require.Equal(t, plan.Succeeded, p.State, p.Reason)
	require.NotNil(t, p.Approval)
	assert.Equal(t, "kubectl-annotate", p.Approval.By)
	assert.Equal(t, map[xid.Step]plan.StepState{
		xid.StepSetNodeCondition: plan.StepSucceeded, xid.StepRecordEvent: plan.StepSucceeded,
		xid.StepTaintDevice: plan.StepSkipped, xid.StepEvictHolders: plan.StepSucceeded, xid.StepResetGPU: plan.StepSkipped,
	}, stepStates(p))
	c := condition(k.node(t, "appr-1"))
	require.NotNil(t, c)
	assert.Equal(t, "Memory", c.Reason)
	assert.False(t, k.node(t, "appr-1").Spec.Unschedulable, "a device fault does not cordon the node")
	assert.True(t, k.evicted(t, "team-appr", "train-0"))
	assert.False(t, k.evicted(t, "team-appr", "train-1"), "the healthy GPU's pod keeps running")

	steps := h.logs.FilterMessage("accelerator_remediation: step succeeded").All()
	require.NotEmpty(t, steps)
	assert.Equal(t, "kubectl-annotate", steps[0].ContextMap()["approved_by"])
	assert.Equal(t, int64(1), counter(t, h, "otelcol_exporter_remediation_actions", attribute.String("step", "evict_holders"), attribute.String("outcome", "succeeded")))
	assert.Equal(t, int64(1), counter(t, h, "otelcol_exporter_remediation_actions", attribute.String("step", "reset_gpu"), attribute.String("outcome", "skipped")))
}

func TestApprovalExpires(t *testing.T) {
	needServer(t)
	k := admin()
	k.mkNode(t, "exp-1", "p5.48xlarge")
	clk := &clock{t: t0}
	cfg := approveMode(testConfig())
	cfg.ApprovalTTL = 10 * time.Minute
	h := start(t, cfg, clk, nil)
	h.send(event{node: "exp-1", device: "GPU-1", xid: 79})
	h.tick()
	clk.add(11 * time.Minute)
	h.tick()
	p := h.only()
	assert.Equal(t, plan.Expired, p.State)
	k.approve(t, "exp-1", p.ID)
	h.tick()
	assert.Equal(t, plan.Expired, h.only().State, "a late approval does not revive it")
	assert.False(t, k.node(t, "exp-1").Spec.Unschedulable)
	assert.Equal(t, 1, h.logs.FilterMessage("accelerator_remediation: plan expired").Len())
}

// A burst: ten nodes lose a GPU at once; only max_nodes of them are
// cordoned and drained, the rest wait with the rail named.
func TestTenNodesFailingAtOnce(t *testing.T) {
	needServer(t)
	k := admin()
	cfg := testConfig()
	cfg.Mode = engine.Automatic
	cfg.GuardRails.MaxNodes = 2
	h := start(t, cfg, &clock{t: t0}, nil)
	for i := range 10 {
		node := fmt.Sprintf("burst-%d", i)
		k.mkNode(t, node, "p4d.24xlarge")
		h.send(event{node: node, device: "GPU-0", xid: 79, instanceType: "p4d.24xlarge"})
	}
	h.tick()
	byState := map[plan.State]int{}
	for _, p := range h.plans() {
		byState[p.State]++
		if p.State == plan.Waiting {
			assert.Contains(t, p.Reason, "max_nodes: 2 nodes under remediation")
		}
	}
	assert.Equal(t, map[plan.State]int{plan.Succeeded: 2, plan.Waiting: 8}, byState)
	cordoned := 0
	for i := range 10 {
		if k.node(t, fmt.Sprintf("burst-%d", i)).Spec.Unschedulable {
			cordoned++
		}
	}
	assert.Equal(t, 2, cordoned)
	// Every node got its condition and Event: telling is not limited.
	for i := range 10 {
		assert.NotNil(t, condition(k.node(t, fmt.Sprintf("burst-%d", i))))
	}
}

// webhook is an escalation receiver that fails its first `fail` requests.
type webhook struct {
	mu      sync.Mutex
	fail    int
	calls   int
	bundles []escalate.Bundle
	keys    []string
}

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	if w.calls <= w.fail {
		http.Error(rw, "on-call system down", http.StatusServiceUnavailable)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var b escalate.Bundle
	if err := json.Unmarshal(body, &b); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	w.bundles = append(w.bundles, b)
	w.keys = append(w.keys, r.Header.Get("Idempotency-Key"))
}

func (w *webhook) received() []escalate.Bundle {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]escalate.Bundle(nil), w.bundles...)
}

// A PodDisruptionBudget that allows no disruption blocks the eviction; the
// plan retries until eviction_timeout, then stops and escalates; the
// webhook is down at first, and the bundle arrives once it is back.
func TestPDBBlocksThenPlanEscalates(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	k := admin()
	k.mkNode(t, "pdb-1", "p5.48xlarge")
	k.mkNamespace(t, "team-pdb")
	sel := map[string]string{"app": "serve"}
	k.mkPod(t, "team-pdb", "serve-0", "pdb-1", sel)
	cs := server.Client("")
	pdb, err := cs.PolicyV1().PodDisruptionBudgets("team-pdb").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "serve", Namespace: "team-pdb"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: sel}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	_, err = cs.PolicyV1().PodDisruptionBudgets("team-pdb").UpdateStatus(ctx, pdb, metav1.UpdateOptions{})
	require.NoError(t, err)

	hook := &webhook{fail: 1}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	clk := &clock{t: t0}
	cfg := testConfig()
	cfg.Mode = engine.Automatic
	cfg.EvictionTimeout = 5 * time.Minute
	cfg.Escalation.Endpoint = srv.URL
	h := start(t, cfg, clk, nil)
	// The device's readings before the failure: one series outside the
	// metrics window (dropped from the bundle), two inside.
	h.e.evidence.addMetrics(deviceMetrics("pdb-1", "GPU-95", map[time.Time]float64{t0.Add(-20 * time.Minute): 3, t0.Add(-time.Minute): 97}))
	h.send(event{node: "pdb-1", device: "GPU-95", pod: "serve-0", namespace: "team-pdb", xid: 95})
	h.tick()
	p := h.only()
	assert.Equal(t, plan.Running, p.State)
	evict := p.Steps[3]
	require.Equal(t, xid.StepEvictHolders, evict.Kind)
	assert.Equal(t, plan.StepPending, evict.State)
	assert.Contains(t, evict.Error, "blocked by a PodDisruptionBudget: team-pdb/serve-0")
	for range 4 {
		clk.add(time.Minute)
		h.tick()
		assert.Equal(t, plan.Running, h.only().State)
	}
	clk.add(2 * time.Minute) // past eviction_timeout
	h.tick()
	p = h.only()
	assert.Equal(t, plan.Failed, p.State)
	assert.Contains(t, p.Reason, "step evict_holders failed")
	assert.False(t, p.Escalated, "the webhook was down")
	assert.False(t, k.evicted(t, "team-pdb", "serve-0"), "never evicted past the PDB")

	clk.add(10 * time.Second)
	h.tick()
	p = h.only()
	assert.True(t, p.Escalated)
	got := hook.received()
	require.Len(t, got, 1)
	b := got[0]
	assert.Equal(t, escalate.SchemaVersion, b.SchemaVersion)
	assert.Equal(t, "GPU-95", b.Device.DeviceID)
	assert.Equal(t, []plan.Pod{{Namespace: "team-pdb", Name: "serve-0"}}, b.Device.Holders)
	assert.Equal(t, "memory", b.FailureMode)
	assert.Equal(t, plan.Failed, b.Plan.State)
	assert.Equal(t, 95, b.Evidence.XID)
	require.Len(t, b.RecentEvents, 1)
	assert.Equal(t, 95, b.RecentEvents[0].XID)
	require.Len(t, b.RecentMetrics, 2)
	assert.Equal(t, escalate.Series{Metric: "hw.errors", Attributes: map[string]string{"error.type": "uncorrected"}, Points: []escalate.Point{{Time: t0.Add(-time.Minute), Value: 2}}}, b.RecentMetrics[0])
	assert.Equal(t, escalate.Series{Metric: "hw.gpu.utilization", Points: []escalate.Point{{Time: t0.Add(-time.Minute), Value: 97}}}, b.RecentMetrics[1])
	h.tick()
	assert.Len(t, hook.received(), 1, "delivered once")
	assert.Equal(t, int64(1), counter(t, h, "otelcol_exporter_remediation_escalations", attribute.String("outcome", "retrying")))
	assert.Equal(t, int64(1), counter(t, h, "otelcol_exporter_remediation_escalations", attribute.String("outcome", "delivered")))
}

// A plan whose escalate step meets a webhook that is down retries it with
// backoff and delivers it once the webhook is back.
func TestEscalateStepRetriedWhileWebhookDown(t *testing.T) {
	needServer(t)
	k := admin()
	k.mkNode(t, "esc-1", "p5.48xlarge")
	hook := &webhook{fail: 2}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	clk := &clock{t: t0}
	cfg := testConfig()
	cfg.Mode = engine.Automatic
	cfg.Escalation.Endpoint = srv.URL
	h := start(t, cfg, clk, nil)
	h.send(event{node: "esc-1", device: "GPU-7", xid: 999}) // not in the catalogue: contact_support
	h.tick()
	p := h.only()
	assert.Equal(t, plan.Running, p.State)
	assert.Equal(t, plan.StepPending, p.Steps[1].State)
	assert.Contains(t, p.Steps[1].Error, "503")
	for range 3 {
		clk.add(5 * time.Second)
		h.tick()
	}
	p = h.only()
	assert.Equal(t, plan.Succeeded, p.State, p.Reason)
	assert.Equal(t, 3, p.Steps[1].Attempts)
	require.Len(t, hook.received(), 1)
	assert.Equal(t, "the plan hands the case to a person", hook.received()[0].Reason)
}

// The API server goes away in the middle of a plan: the step fails, is
// retried with backoff, and the plan resumes once the server is back.
func TestAPIServerRestartedMidPlan(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	k := admin()
	k.mkNode(t, "restart-1", "p5.48xlarge")
	clk := &clock{t: t0}
	cfg := testConfig()
	cfg.Mode = engine.Automatic
	cfg.Retry.MaxAttempts = 5
	h := start(t, cfg, clk, nil)
	h.send(event{node: "restart-1", device: "GPU-1", xid: 79})

	server.StopAPIServer()
	h.tick()
	p := h.only()
	assert.Equal(t, plan.Running, p.State)
	assert.Equal(t, plan.StepPending, p.Steps[0].State)
	assert.Equal(t, 1, p.Steps[0].Attempts)
	assert.NotEmpty(t, p.Steps[0].Error)
	require.NoError(t, server.StartAPIServer(ctx))

	clk.add(2 * time.Second)
	h.tick()
	p = h.only()
	require.Equal(t, plan.Succeeded, p.State, p.Reason)
	assert.Equal(t, 2, p.Steps[0].Attempts)
	assert.True(t, k.node(t, "restart-1").Spec.Unschedulable)
	assert.Equal(t, int64(1), counter(t, h, "otelcol_exporter_remediation_actions", attribute.String("step", "set_node_condition"), attribute.String("outcome", "retrying")))
}

// The collector restarts in the middle of a plan: its plans come back from
// file_storage and resume; the steps already done are not run again.
func TestRestartResumesFromStorage(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	k := admin()
	k.mkNode(t, "resume-1", "p5.48xlarge")
	k.mkNamespace(t, "team-resume")
	sel := map[string]string{"app": "resume"}
	k.mkPod(t, "team-resume", "hold-0", "resume-1", sel)
	cs := server.Client("")
	pdb, err := cs.PolicyV1().PodDisruptionBudgets("team-resume").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "resume", Namespace: "team-resume"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: sel}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	setAllowed := func(n int32) {
		pdb, err = cs.PolicyV1().PodDisruptionBudgets("team-resume").Get(ctx, "resume", metav1.GetOptions{})
		require.NoError(t, err)
		pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: n, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
		_, err = cs.PolicyV1().PodDisruptionBudgets("team-resume").UpdateStatus(ctx, pdb, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	setAllowed(0)

	dir := t.TempDir()
	clk := &clock{t: t0}
	cfg := testConfig()
	cfg.Mode = engine.Automatic
	run := func() (*harness, func()) {
		ext, id := filestoragetest.StartNoCleanup(t, dir)
		c := *cfg
		c.Storage = &id
		h := start(t, &c, clk, &componenthealthtest.Host{Extensions: map[component.ID]component.Component{id: ext}})
		return h, func() {
			require.NoError(t, h.e.Shutdown(ctx))
			require.NoError(t, ext.Shutdown(ctx))
		}
	}
	h, stop := run()
	h.send(event{node: "resume-1", device: "GPU-2", pod: "hold-0", namespace: "team-resume", xid: 48})
	h.tick()
	first := h.only()
	require.Equal(t, plan.Running, first.State)
	require.Equal(t, plan.StepSucceeded, first.Steps[1].State, "the Event was recorded")
	stop()

	setAllowed(1)
	clk.add(time.Minute)
	h, stop = run()
	defer stop()
	p := h.only()
	assert.Equal(t, first.ID, p.ID)
	h.tick()
	p = h.only()
	require.Equal(t, plan.Succeeded, p.State, p.Reason)
	assert.Equal(t, 1, p.Steps[0].Attempts, "the condition was not set again")
	assert.Equal(t, 1, p.Steps[1].Attempts, "the Event was not recorded again")
	assert.True(t, k.evicted(t, "team-resume", "hold-0"))
	assert.Equal(t, 0, h.logs.FilterMessage("accelerator_remediation: plan created").Len(), "no new plan after the restart")
}

// deviceMetrics is what an agent sends for a device: a utilization gauge
// and an error counter at the given times.
func deviceMetrics(node, device string, values map[time.Time]float64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(accelschema.AttrK8sNodeName, node)
	rm.Resource().Attributes().PutStr(accelschema.AttrHWID, device)
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	util := ms.AppendEmpty()
	util.SetName("hw.gpu.utilization")
	errs := ms.AppendEmpty()
	errs.SetName("hw.errors")
	sum := errs.SetEmptySum()
	gauge := util.SetEmptyGauge()
	for at, v := range values {
		dp := gauge.DataPoints().AppendEmpty()
		dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
		dp.SetDoubleValue(v)
		e := sum.DataPoints().AppendEmpty()
		e.SetTimestamp(pcommon.NewTimestampFromTime(at))
		e.SetIntValue(2)
		e.Attributes().PutStr("error.type", "uncorrected")
	}
	return md
}

// replace_device on a Karpenter node: cordoned, drained, and its NodeClaim
// deleted so that Karpenter replaces it (no Auto Scaling call).
func TestReplaceDeviceOnAKarpenterNode(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	k := admin()
	k.mkNode(t, "karp-1", "p5.48xlarge")
	dyn, err := dynamic.NewForConfig(server.Config(""))
	require.NoError(t, err)
	_, err = dyn.Resource(kube.NodeClaims).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": map[string]any{"name": "gpu-xk2p9"},
		"status": map[string]any{"nodeName": "karp-1"},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cfg := testConfig()
	cfg.Mode = engine.Automatic
	h := start(t, cfg, &clock{t: t0}, nil)
	h.send(event{node: "karp-1", device: "GPU-157", xid: 157})
	h.tick()
	p := h.only()
	require.Equal(t, plan.Succeeded, p.State, p.Reason)
	for _, s := range p.Steps {
		if s.Kind == xid.StepMarkUnhealthy {
			assert.Equal(t, plan.StepSucceeded, s.State)
			assert.Contains(t, s.Outcome, "NodeClaim gpu-xk2p9 deleted")
		}
	}
	_, err = dyn.Resource(kube.NodeClaims).Get(ctx, "gpu-xk2p9", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	assert.True(t, k.node(t, "karp-1").Spec.Unschedulable)
}
