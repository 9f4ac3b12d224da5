package kube

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

func mkNode(t *testing.T, name, instanceType string) {
	t.Helper()
	_, err := server.Client("").CoreV1().Nodes().Create(context.Background(), &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{InstanceTypeLabel: instanceType}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

func mkNamespace(t *testing.T, name string) {
	t.Helper()
	_, err := server.Client("").CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// mkPod creates a pod bound to node; owner is "" (no controller),
// "ReplicaSet" or "DaemonSet".
func mkPod(t *testing.T, ns, name, node, owner string, labels map[string]string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: owner, Name: name + "-owner", UID: "00000000-0000-0000-0000-000000000001", Controller: new(true)}}
	}
	p, err := server.Client("").CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	require.NoError(t, err)
	return running(t, p)
}

// running writes the status a kubelet would: Running and Ready. The
// Eviction API checks PodDisruptionBudgets only for such pods (a Pending
// pod is evicted whatever its budget says).
func running(t *testing.T, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	p, err := server.Client("").CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
	require.NoError(t, err)
	return p
}

// evicted: the API server accepted the pod's eviction (without a kubelet
// the pod stays, marked for deletion).
func evicted(t *testing.T, ns, name string) bool {
	t.Helper()
	p, err := server.Client("").CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return true
	}
	return p.DeletionTimestamp != nil
}

func gpuPlan(t *testing.T, code int, s plan.Subject) *plan.Plan {
	t.Helper()
	rp, ok := xid.PlanFor(xid.Lookup(code))
	require.True(t, ok)
	c := xid.Lookup(code)
	return plan.New(rp, s, plan.Evidence{Event: "accelerator.health.xid", XID: code, Description: c.Description}, time.Now())
}

func TestConditionEventAndCordon(t *testing.T) {
	ctx := context.Background()
	mkNode(t, "cond-1", "p5.48xlarge")
	c := cluster()
	p := gpuPlan(t, 79, plan.Subject{Node: "cond-1", DeviceID: "GPU-aaaa"})

	out, err := Condition{c}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.Contains(t, out.Detail, "AcceleratorHealthy=False reason DeviceLost")
	node, err := server.Client("").CoreV1().Nodes().Get(ctx, "cond-1", metav1.GetOptions{})
	require.NoError(t, err)
	require.Len(t, node.Status.Conditions, 1)
	assert.Equal(t, corev1.ConditionFalse, node.Status.Conditions[0].Status)
	assert.Equal(t, "DeviceLost", node.Status.Conditions[0].Reason)
	assert.Contains(t, node.Status.Conditions[0].Message, p.ID)
	assert.False(t, node.Spec.Unschedulable, "a condition alone does not cordon")

	out, err = Event{c}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.False(t, out.Skipped)
	ev, err := server.Client("").CoreV1().Events("default").Get(ctx, "cond-1."+p.ID, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "Node", ev.InvolvedObject.Kind)
	assert.Equal(t, corev1.EventTypeWarning, ev.Type)
	out, err = Event{c}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.True(t, out.Skipped, "a resumed plan does not record the event twice")

	// Dry run: the API server checks the update and changes nothing.
	_, err = Cordon{c}.Run(ctx, p, true)
	require.NoError(t, err)
	node, _ = server.Client("").CoreV1().Nodes().Get(ctx, "cond-1", metav1.GetOptions{})
	assert.False(t, node.Spec.Unschedulable)

	_, err = Cordon{c}.Run(ctx, p, false)
	require.NoError(t, err)
	node, _ = server.Client("").CoreV1().Nodes().Get(ctx, "cond-1", metav1.GetOptions{})
	assert.True(t, node.Spec.Unschedulable)
	var ours []corev1.Taint
	for _, tn := range node.Spec.Taints {
		if tn.Key == prefix+"/unhealthy" {
			ours = append(ours, tn)
		}
	}
	require.Len(t, ours, 1)
	assert.Equal(t, corev1.Taint{Key: prefix + "/unhealthy", Value: "device_lost", Effect: corev1.TaintEffectNoSchedule, TimeAdded: ours[0].TimeAdded}, ours[0])
	assert.Len(t, node.Spec.Taints, 2, "the API server's own not-ready taint is kept")
	out, err = Cordon{c}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.True(t, out.Skipped)
}

// Only the pods holding the failed device are evicted; the node's other
// GPU pods keep running.
func TestEvictHoldersTouchesOnlyTheHolders(t *testing.T) {
	ctx := context.Background()
	mkNode(t, "evict-1", "p5.48xlarge")
	mkNamespace(t, "team-a")
	holder := mkPod(t, "team-a", "trainer-0", "evict-1", "ReplicaSet", nil)
	mkPod(t, "team-a", "trainer-1", "evict-1", "ReplicaSet", nil)
	mkPod(t, "team-a", "other-node", "someone-else", "ReplicaSet", nil)
	p := gpuPlan(t, 48, plan.Subject{Node: "evict-1", DeviceID: "GPU-bbbb", HoldersKnown: true, Holders: []plan.Pod{
		{Namespace: "team-a", Name: "trainer-0", UID: string(holder.UID)},
		{Namespace: "team-a", Name: "other-node"}, // named, but no longer on this node
		{Namespace: "team-a", Name: "long-gone"},
	}})
	out, err := EvictHolders{cluster()}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.Equal(t, "evicted team-a/trainer-0; already gone team-a/other-node, team-a/long-gone", out.Detail)
	assert.True(t, evicted(t, "team-a", "trainer-0"))
	assert.False(t, evicted(t, "team-a", "trainer-1"))
	assert.False(t, evicted(t, "team-a", "other-node"))

	again, err := EvictHolders{cluster()}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.NotContains(t, again.Detail, "evicted", "a second run evicts nothing more")

	none := gpuPlan(t, 48, plan.Subject{Node: "evict-1", DeviceID: "GPU-cccc"})
	out, err = EvictHolders{cluster()}.Run(ctx, none, false)
	require.NoError(t, err)
	assert.True(t, out.Skipped)
	assert.Contains(t, out.Detail, "names no holder")
}

// A PodDisruptionBudget that allows no disruption blocks the eviction
// (the real API server answers 429); once it allows one, the pod goes.
func TestPDBBlocksEviction(t *testing.T) {
	ctx := context.Background()
	admin := server.Client("")
	mkNode(t, "pdb-1", "p5.48xlarge")
	mkNamespace(t, "team-pdb")
	sel := map[string]string{"app": "serve"}
	mkPod(t, "team-pdb", "serve-0", "pdb-1", "ReplicaSet", sel)
	pdb, err := admin.PolicyV1().PodDisruptionBudgets("team-pdb").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "serve", Namespace: "team-pdb"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: sel}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	// No disruption controller runs: the test writes the status it would.
	setPDB := func(allowed int32) {
		pdb, err = admin.PolicyV1().PodDisruptionBudgets("team-pdb").Get(ctx, "serve", metav1.GetOptions{})
		require.NoError(t, err)
		pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
		_, err = admin.PolicyV1().PodDisruptionBudgets("team-pdb").UpdateStatus(ctx, pdb, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	setPDB(0)
	p := gpuPlan(t, 95, plan.Subject{Node: "pdb-1", DeviceID: "GPU-dddd", HoldersKnown: true, Holders: []plan.Pod{{Namespace: "team-pdb", Name: "serve-0"}}})
	out, err := EvictHolders{cluster()}.Run(ctx, p, false)
	require.Error(t, err)
	assert.True(t, executor.IsBlocked(err), "%v", err)
	assert.Contains(t, out.Detail, "blocked by a PodDisruptionBudget: team-pdb/serve-0")
	assert.False(t, evicted(t, "team-pdb", "serve-0"))

	setPDB(1)
	out, err = EvictHolders{cluster()}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.Equal(t, "evicted team-pdb/serve-0", out.Detail)
	assert.True(t, evicted(t, "team-pdb", "serve-0"))
}

func TestDrainLeavesDaemonSetAndMirrorPods(t *testing.T) {
	ctx := context.Background()
	mkNode(t, "drain-1", "p5.48xlarge")
	mkNamespace(t, "team-d")
	mkPod(t, "team-d", "job-0", "drain-1", "", nil)
	mkPod(t, "team-d", "web-0", "drain-1", "ReplicaSet", nil)
	mkPod(t, "team-d", "agent", "drain-1", "DaemonSet", nil)
	mkPod(t, "team-d", "elsewhere", "drain-2", "ReplicaSet", nil)
	p := gpuPlan(t, 79, plan.Subject{Node: "drain-1"})
	out, err := Drain{cluster()}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.Equal(t, "drain: evicted team-d/job-0, team-d/web-0", out.Detail)
	assert.False(t, evicted(t, "team-d", "agent"))
	assert.False(t, evicted(t, "team-d", "elsewhere"))
}

func TestRestartWorkloadRestartsOnlyControlledPods(t *testing.T) {
	ctx := context.Background()
	mkNode(t, "restart-1", "g5.xlarge")
	mkNamespace(t, "team-r")
	mkPod(t, "team-r", "app-0", "restart-1", "ReplicaSet", nil)
	mkPod(t, "team-r", "bare", "restart-1", "", nil)
	p := gpuPlan(t, 13, plan.Subject{Node: "restart-1", HoldersKnown: true, Holders: []plan.Pod{{Namespace: "team-r", Name: "app-0"}, {Namespace: "team-r", Name: "bare"}}})
	out, err := RestartWorkload{cluster()}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.Equal(t, "restart: evicted team-r/app-0; not restarted (no controller would start it again): team-r/bare", out.Detail)
	assert.True(t, evicted(t, "team-r", "app-0"))
	assert.False(t, evicted(t, "team-r", "bare"))
}

func TestDeviceTaintRule(t *testing.T) {
	ctx := context.Background()
	p := gpuPlan(t, 48, plan.Subject{Node: "dra-1", DeviceID: "GPU-eeee", DRADriver: "gpu.nvidia.com", DRAPool: "dra-1", DRADevice: "gpu-3"})
	ok, _ := DeviceTaint{cluster()}.Applies(p.Subject)
	require.True(t, ok)
	out, err := DeviceTaint{cluster()}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.False(t, out.Skipped, out.Detail)
	rule, err := server.Client("").ResourceV1().DeviceTaintRules().Get(ctx, p.ID, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "gpu-3", *rule.Spec.DeviceSelector.Device)
	assert.Equal(t, "gpu.nvidia.com", *rule.Spec.DeviceSelector.Driver)
	assert.Equal(t, prefix+"/unhealthy", rule.Spec.Taint.Key)
	out, err = DeviceTaint{cluster()}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.True(t, out.Skipped)

	notDRA := plan.Subject{Node: "dra-1", DeviceID: "GPU-ffff"}
	ok, why := DeviceTaint{cluster()}.Applies(notDRA)
	assert.False(t, ok)
	assert.Contains(t, why, "not allocated through DRA")
}

// An approval is the plan's id in the node annotation; who set it comes
// from the API server's managedFields.
func TestApprovalFromNodeAnnotation(t *testing.T) {
	ctx := context.Background()
	mkNode(t, "approve-1", "p5.48xlarge")
	p := gpuPlan(t, 79, plan.Subject{Node: "approve-1"})
	a := Approvals{cluster()}
	got, err := a.Approval(ctx, p)
	require.NoError(t, err)
	assert.Nil(t, got)

	annotate := func(value string) {
		patch := []byte(`{"metadata":{"annotations":{"` + prefix + `/approve":"` + value + `"}}}`)
		_, err := server.Client("").CoreV1().Nodes().Patch(ctx, "approve-1", "application/merge-patch+json", patch, metav1.PatchOptions{FieldManager: "kubectl-annotate"})
		require.NoError(t, err)
	}
	annotate("rp-0000000000")
	got, err = a.Approval(ctx, p)
	require.NoError(t, err)
	assert.Nil(t, got, "an approval of another plan")

	annotate(p.ID)
	got, err = a.Approval(ctx, p)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, "kubectl-annotate", got.By)
	assert.False(t, got.At.IsZero())
}

func TestCountNodes(t *testing.T) {
	ctx := context.Background()
	mkNode(t, "count-1", "trn1.32xlarge")
	mkNode(t, "count-2", "trn1.32xlarge")
	n, err := cluster().CountNodes(ctx, "trn1.32xlarge")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}

func TestReplaceKarpenterNodeDeletesItsNodeClaim(t *testing.T) {
	ctx := context.Background()
	mkNode(t, "karp-1", "p5.48xlarge")
	mkNodeClaim(t, "default-abc12", "karp-1")
	mkNodeClaim(t, "default-other", "karp-2")
	p := gpuPlan(t, 157, plan.Subject{Node: "karp-1"})
	out, err := karpenter().Run(ctx, p, true)
	require.NoError(t, err)
	assert.Contains(t, out.Detail, "NodeClaim default-abc12 deleted")
	dyn, err := dynamic.NewForConfig(server.Config("")) // the admin reads
	require.NoError(t, err)
	_, err = dyn.Resource(NodeClaims).Get(ctx, "default-abc12", metav1.GetOptions{})
	require.NoError(t, err, "a dry run deletes nothing")

	_, err = karpenter().Run(ctx, p, false)
	require.NoError(t, err)
	_, err = dyn.Resource(NodeClaims).Get(ctx, "default-abc12", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
	_, err = dyn.Resource(NodeClaims).Get(ctx, "default-other", metav1.GetOptions{})
	require.NoError(t, err, "another node's claim stays")

	out, err = karpenter().Run(ctx, gpuPlan(t, 157, plan.Subject{Node: "not-karpenter"}), false)
	require.NoError(t, err)
	assert.True(t, out.Skipped)
	assert.Equal(t, NotKarpenter, out.Detail)
}
