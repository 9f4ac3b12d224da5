package kubeapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/retry"
)

const approveKey = "accelerator.otelcol-accel.io/approve"

// managerOf finds the managedFields entry of manager (and subresource).
func managedBy(t *testing.T, n metav1.Object, manager, subresource string) *metav1.ManagedFieldsEntry {
	t.Helper()
	for _, mf := range n.GetManagedFields() {
		if mf.Manager == manager && mf.Subresource == subresource {
			return &mf
		}
	}
	return nil
}

// The remediator's node writes, as client-go sends them: a strategic-merge
// patch of nodes/status (merged by condition type), a merge patch of an
// annotation (kubectl annotate), a JSON patch, and a read-modify-update
// whose stale resourceVersion is refused with 409.
func TestClientGoNodeWrites(t *testing.T) {
	_, _, kc := startAPI(t)
	cs := clientset(t, kc)
	ctx := context.Background()
	nodes := cs.CoreV1().Nodes()
	const name = "gpu-h200-a"

	all, err := nodes.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	w, err := nodes.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: all.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()

	cond := corev1.NodeCondition{Type: "AcceleratorHealthy", Status: corev1.ConditionFalse, Reason: "DeviceLost", Message: "XID 79"}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}})
	n, err := nodes.Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "otelcol-accel-remediator"}, "status")
	require.NoError(t, err)
	types := map[corev1.NodeConditionType]corev1.ConditionStatus{}
	for _, c := range n.Status.Conditions {
		types[c.Type] = c.Status
	}
	assert.Equal(t, map[corev1.NodeConditionType]corev1.ConditionStatus{corev1.NodeReady: corev1.ConditionTrue, "AcceleratorHealthy": corev1.ConditionFalse}, types,
		"merged by type: the kubelet's Ready stays")
	mf := managedBy(t, n, "otelcol-accel-remediator", "status")
	require.NotNil(t, mf, "the status patch's manager is recorded")
	assert.Equal(t, metav1.ManagedFieldsOperationUpdate, mf.Operation)

	// kubectl annotate node gpu-h200-a accelerator.otelcol-accel.io/approve=rp-1
	_, err = nodes.Patch(ctx, name, "application/merge-patch+json", []byte(`{"metadata":{"annotations":{"`+approveKey+`":"rp-1"}}}`),
		metav1.PatchOptions{FieldManager: "kubectl-annotate"})
	require.NoError(t, err)
	n = mustNode(t, nodes, name)
	assert.Equal(t, "rp-1", n.Annotations[approveKey])
	mf = managedBy(t, n, "kubectl-annotate", "")
	require.NotNil(t, mf)
	require.NotNil(t, mf.FieldsV1)
	assert.Contains(t, mf.FieldsV1.GetRawString(), `"f:`+approveKey+`"`, "the approval reader finds who set the annotation")
	require.NotNil(t, mf.Time)

	_, err = nodes.Patch(ctx, name, types2JSON, []byte(`[{"op":"add","path":"/metadata/labels/team","value":"infra"}]`), metav1.PatchOptions{})
	require.NoError(t, err)
	assert.Equal(t, "infra", mustNode(t, nodes, name).Labels["team"])

	// The main resource does not change status; dry run changes nothing.
	stale := mustNode(t, nodes, name)
	stale.Status.Conditions = nil
	stale.Spec.Unschedulable = true
	_, err = nodes.Update(ctx, stale, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	require.NoError(t, err)
	assert.False(t, mustNode(t, nodes, name).Spec.Unschedulable, "dry run")

	// A concurrent writer between read and update: 409, and
	// RetryOnConflict succeeds on the fresh copy.
	_, err = nodes.Patch(ctx, name, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"autoscaler":"touched"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	_, err = nodes.Update(ctx, stale, metav1.UpdateOptions{FieldManager: "otelcol-accel-remediator"})
	require.True(t, apierrors.IsConflict(err), "stale resourceVersion: %v", err)
	conflicts := 0
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n := mustNode(t, nodes, name)
		if conflicts == 0 {
			conflicts++
			_, err := nodes.Patch(ctx, name, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"autoscaler":"again"}}}`), metav1.PatchOptions{})
			require.NoError(t, err)
		}
		n.Spec.Unschedulable = true
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "accelerator.otelcol-accel.io/unhealthy", Value: "device_lost", Effect: corev1.TaintEffectNoSchedule})
		n.Status.Conditions = nil
		_, err := nodes.Update(ctx, n, metav1.UpdateOptions{FieldManager: "otelcol-accel-remediator"})
		return err
	})
	require.NoError(t, err)
	n = mustNode(t, nodes, name)
	assert.True(t, n.Spec.Unschedulable)
	assert.Len(t, n.Spec.Taints, 1)
	assert.Len(t, n.Status.Conditions, 2, "an update of the main resource leaves status alone")
	assert.Equal(t, "again", n.Labels["autoscaler"])
	assert.Equal(t, "rp-1", n.Annotations[approveKey])

	// The watch saw the changes, the cordon last.
	var last *corev1.Node
	for last == nil || !last.Spec.Unschedulable {
		select {
		case ev := <-w.ResultChan():
			require.Equal(t, watch.Modified, ev.Type)
			last = ev.Object.(*corev1.Node)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}

	_, err = nodes.Patch(ctx, name, "application/apply-patch+yaml", []byte(`{}`), metav1.PatchOptions{FieldManager: "x"})
	assert.True(t, apierrors.IsUnsupportedMediaType(err), "%v", err)
	_, err = nodes.Patch(ctx, "no-such-node", "application/merge-patch+json", []byte(`{}`), metav1.PatchOptions{})
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
}

const types2JSON = "application/json-patch+json"

func mustNode(t *testing.T, nodes interface {
	Get(context.Context, string, metav1.GetOptions) (*corev1.Node, error)
}, name string,
) *corev1.Node {
	t.Helper()
	n, err := nodes.Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return n
}

// The Eviction API: a PDB allowing no disruption refuses with 429 (what
// client-go's IsTooManyRequests and kubectl drain wait on); allowed, the
// eviction takes one disruption and the pod is gone, for Get, for watches
// and for the simulator's observers (PodResources).
func TestClientGoEvictionHonoursPDBs(t *testing.T) {
	srv, _, kc := startAPI(t)
	cs := clientset(t, kc)
	ctx := context.Background()
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=gpu-a100-a"})
	require.NoError(t, err)
	require.NotEmpty(t, pods.Items)
	pod := pods.Items[0]
	ns := pod.Namespace

	var deleted []string
	srv.Store().Observe(func(typ string, obj runtime.Object) {
		if p, ok := obj.(*corev1.Pod); ok && typ == "DELETED" {
			deleted = append(deleted, p.Namespace+"/"+p.Name)
		}
	})
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pod.Name, ResourceVersion: pods.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()

	require.NotEmpty(t, pod.Labels)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "keep-one", Namespace: ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: pod.Labels}},
	}
	pdb, err = cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{})
	require.NoError(t, err)
	pdb.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	pdb, err = cs.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{})
	require.NoError(t, err)

	evict := func(uid types.UID) error {
		return cs.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: ns},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}},
		})
	}
	err = evict(pod.UID)
	require.True(t, apierrors.IsTooManyRequests(err), "PDB allows no disruption: %v", err)
	assert.Contains(t, err.Error(), "disruption budget")
	_, err = cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	require.NoError(t, err, "still there")

	require.True(t, apierrors.IsConflict(evict("another-uid")), "a UID precondition of another pod")

	pdb.Status.DisruptionsAllowed = 1
	_, err = cs.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, cs.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: ns}, DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}},
	}))
	_, err = cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	require.NoError(t, err, "a dry-run eviction leaves the pod")
	require.NoError(t, evict(pod.UID))
	_, err = cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "evicted: %v", err)
	got, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "keep-one", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(0), got.Status.DisruptionsAllowed, "the eviction took the disruption")
	assert.Contains(t, got.Status.DisruptedPods, pod.Name)
	assert.Equal(t, []string{ns + "/" + pod.Name}, deleted)
	for ev := range w.ResultChan() {
		if ev.Type == watch.Deleted {
			assert.Equal(t, pod.Name, ev.Object.(*corev1.Pod).Name)
			break
		}
	}
	assert.True(t, apierrors.IsNotFound(evict(pod.UID)), "gone")
}

// Events (the remediator records one per plan, named after it) and the
// Lease client-go leader election takes.
func TestClientGoEventsAndLeaderElection(t *testing.T) {
	_, _, kc := startAPI(t)
	cs := clientset(t, kc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "gpu-h200-a.rp-1", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: "gpu-h200-a"},
		Reason:         "AcceleratorDeviceLost", Type: corev1.EventTypeWarning, Message: "XID 79",
		Source: corev1.EventSource{Component: "otelcol-accel-remediator"},
	}
	created, err := cs.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, ev, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.NotEmpty(t, created.UID)
	assert.NotEmpty(t, created.ResourceVersion)
	_, err = cs.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, ev, metav1.CreateOptions{})
	assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)
	list, err := cs.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,involvedObject.name=gpu-h200-a"})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	_, err = cs.CoreV1().Events("no-such-namespace").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the namespace must exist: %v", err)

	lock := &resourcelock.LeaseLock{
		LeaseMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "otelcol-accel-remediator"}, Client: cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "replica-a"},
	}
	led := make(chan struct{})
	lctx, stop := context.WithCancel(ctx)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		leaderelection.RunOrDie(lctx, leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second, ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) { close(led) }, OnStoppedLeading: func() {}},
		})
	}()
	select {
	case <-led:
	case <-ctx.Done():
		t.Fatal("never led")
	}
	lease, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, "otelcol-accel-remediator", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, lease.Spec.HolderIdentity)
	assert.Equal(t, "replica-a", *lease.Spec.HolderIdentity)
	stop()
	<-ended // released the Lease

	// A second replica's stale Lease update conflicts.
	lease, err = cs.CoordinationV1().Leases("kube-system").Get(ctx, "otelcol-accel-remediator", metav1.GetOptions{})
	require.NoError(t, err)
	old := lease.DeepCopy()
	lease.Spec.HolderIdentity = new("replica-a")
	_, err = cs.CoordinationV1().Leases("kube-system").Update(ctx, lease, metav1.UpdateOptions{})
	require.NoError(t, err)
	old.Spec.HolderIdentity = new("replica-b")
	_, err = cs.CoordinationV1().Leases("kube-system").Update(ctx, old, metav1.UpdateOptions{})
	assert.True(t, apierrors.IsConflict(err), "%v", err)
}

// Discovery lists the writable verbs and subresources.
func TestDiscoveryWriteVerbs(t *testing.T) {
	_, _, kc := startAPI(t)
	cs := clientset(t, kc)
	l, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
	require.NoError(t, err)
	var names []string
	for _, r := range l.APIResources {
		if r.Name == "nodes" {
			assert.Contains(t, r.Verbs, "patch")
		}
		names = append(names, r.Name)
	}
	assert.Contains(t, strings.Join(names, " "), "pods/eviction")
	assert.Contains(t, names, "nodes/status")
}

// ConfigMaps as the remediator keeps plans in them: create, list by label,
// update with optimistic concurrency (a deposed leader's stale write is
// refused), delete.
func TestClientGoConfigMaps(t *testing.T) {
	_, _, kc := startAPI(t)
	cs := clientset(t, kc)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps("kube-system")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plan-rp-1", Labels: map[string]string{"owner": "remediator"}}, Data: map[string]string{"plan": "v1"}}
	created, err := cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: "otelcol-accel-remediator"})
	require.NoError(t, err)
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "owner=remediator"})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	leader := created.DeepCopy()
	leader.Data["plan"] = "v2"
	_, err = cms.Update(ctx, leader, metav1.UpdateOptions{})
	require.NoError(t, err)
	deposed := created.DeepCopy()
	deposed.Data["plan"] = "stale"
	_, err = cms.Update(ctx, deposed, metav1.UpdateOptions{})
	require.True(t, apierrors.IsConflict(err), "%v", err)
	got, err := cms.Get(ctx, "plan-rp-1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "v2", got.Data["plan"])
	require.NoError(t, cms.Delete(ctx, "plan-rp-1", metav1.DeleteOptions{}))
	_, err = cms.Get(ctx, "plan-rp-1", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err))
	assert.True(t, apierrors.IsNotFound(cms.Delete(ctx, "plan-rp-1", metav1.DeleteOptions{})))
}
