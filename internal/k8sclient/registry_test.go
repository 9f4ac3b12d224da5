package k8sclient

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kubeapi"
)

var allKinds = []Kind{Pods, Nodes, ResourceClaims, ResourceSlices, Events}

func acquire(t *testing.T, r *Registry, api APIConfig, node string, kinds ...Kind) *Informers {
	t.Helper()
	h, err := r.Acquire(api, node)
	require.NoError(t, err)
	t.Cleanup(h.Release)
	for _, k := range kinds {
		_, err := h.Informer(k)
		require.NoError(t, err)
	}
	require.Eventually(t, h.Synced, 10*time.Second, 10*time.Millisecond)
	return h
}

func watches(s *sim) map[string]kubeapi.WatchCount { return s.api.Watches() }

func openWatches(s *sim, kinds ...Kind) map[Kind]int {
	w := watches(s)
	out := map[Kind]int{}
	for _, k := range kinds {
		out[k] = w[string(k)].Open
	}
	return out
}

// Two components on one node, one watch per kind; another node has its
// own; the informers stop with the last component that lets go.
func TestComponentsOnANodeShareOneWatchPerKind(t *testing.T) {
	s := startSim(t, nil)
	api := s.kubeconfig(t)
	node, other := s.nodes(t)
	r := NewRegistry(Providers{})

	attrs := acquire(t, r, api, node, allKinds...)
	discovery := acquire(t, r, api, node, Pods)
	assert.Equal(t, 2, r.Holders(api, node))
	a, _ := attrs.Informer(Pods)
	b, _ := discovery.Informer(Pods)
	assert.Same(t, a, b, "one pod informer for both")
	assert.Equal(t, map[Kind]int{Pods: 1, Nodes: 1, ResourceClaims: 1, ResourceSlices: 1, Events: 1}, openWatches(s, allKinds...))
	for _, k := range allKinds {
		assert.Equal(t, 1, watches(s)[string(k)].Started, "%s watches started", k)
	}

	// What the pods informer holds is this node's.
	for _, o := range a.GetStore().List() {
		assert.Equal(t, node, o.(*corev1.Pod).Spec.NodeName)
	}
	assert.NotEmpty(t, a.GetStore().List())

	elsewhere := acquire(t, r, api, other, Pods)
	assert.Equal(t, 2, openWatches(s, Pods)[Pods], "another node is another watch")
	elsewhere.Release()
	require.Eventually(t, func() bool { return openWatches(s, Pods)[Pods] == 1 }, 10*time.Second, 10*time.Millisecond)

	// The attributes processor shuts down first: discovery keeps its pods.
	attrs.Release()
	attrs.Release() // twice is harmless
	assert.Equal(t, 1, r.Holders(api, node))
	assert.Equal(t, 1, openWatches(s, Pods)[Pods])
	assert.True(t, b.HasSynced())
	_, err := attrs.Informer(Nodes)
	assert.ErrorIs(t, err, errReleased)

	discovery.Release()
	assert.Zero(t, r.Holders(api, node))
	require.Eventually(t, func() bool { return allZero(openWatches(s, allKinds...)) }, 10*time.Second, 10*time.Millisecond, "the last release stops every watch")

	// A component that starts later gets fresh informers.
	acquire(t, r, api, node, Pods)
	assert.Equal(t, 3, watches(s)["pods"].Started, "this node's, the other node's, and the new one")
}

func allZero(m map[Kind]int) bool {
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

// Releasing removes the component's handlers from informers others keep.
func TestReleaseRemovesTheComponentsHandlers(t *testing.T) {
	s := startSim(t, nil)
	api := s.kubeconfig(t)
	node, _ := s.nodes(t)
	r := NewRegistry(Providers{})
	first := acquire(t, r, api, node, Pods)
	second := acquire(t, r, api, node, Pods)
	var firstCalls, secondCalls atomic.Int32
	count := func(n *atomic.Int32) cache.ResourceEventHandler {
		return cache.ResourceEventHandlerFuncs{AddFunc: func(any) { n.Add(1) }, UpdateFunc: func(any, any) { n.Add(1) }}
	}
	require.NoError(t, first.AddEventHandler(Pods, count(&firstCalls)))
	require.NoError(t, second.AddEventHandler(Pods, count(&secondCalls)))
	require.Eventually(t, func() bool { return firstCalls.Load() > 0 && secondCalls.Load() > 0 }, 10*time.Second, 10*time.Millisecond,
		"a handler added late is told of the cached pods")

	first.Release()
	before := firstCalls.Load()
	secondBefore := secondCalls.Load()
	require.NoError(t, s.api.Store().Apply(newPod(node, "late-0")))
	require.Eventually(t, func() bool { return secondCalls.Load() > secondBefore }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, before, firstCalls.Load())
	assert.ErrorIs(t, first.AddEventHandler(Pods, count(&firstCalls)), errReleased)
}

// Cached pods keep what components read and lose what none does.
func TestCachedPodsAreSlim(t *testing.T) {
	s := startSim(t, nil)
	api := s.kubeconfig(t)
	node, _ := s.nodes(t)
	h := acquire(t, NewRegistry(Providers{}), api, node, Pods)
	pods, _ := h.Informer(Pods)
	p := newPod(node, "vllm-secret")
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "HF_TOKEN", Value: "hf_secret"}}
	p.Spec.Containers[0].Command = []string{"vllm", "serve"}
	p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Env: []corev1.EnvVar{{Name: "A", Value: "b"}}}}
	require.NoError(t, s.api.Store().Apply(p))

	var got *corev1.Pod
	require.Eventually(t, func() bool {
		o, ok, _ := pods.GetStore().GetByKey("serve/vllm-secret")
		if ok {
			got = o.(*corev1.Pod)
		}
		return ok
	}, 10*time.Second, 10*time.Millisecond)
	assert.Empty(t, got.ManagedFields)
	assert.Empty(t, got.Spec.Containers[0].Env)
	assert.Empty(t, got.Spec.Containers[0].Command)
	assert.Empty(t, got.Spec.InitContainers[0].Env)
	assert.Equal(t, "search", got.Labels["team"])
	assert.Equal(t, "vllm", got.Annotations["otelcol-accel.io/inference-server"])
	assert.Equal(t, int32(8000), got.Spec.Containers[0].Ports[0].ContainerPort)
	assert.Equal(t, "10.9.9.9", got.Status.PodIP)
}

func newPod(node, name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "serve", Name: name, UID: types.UID("uid-" + name),
			Labels: map[string]string{"team": "search"}, Annotations: map[string]string{"otelcol-accel.io/inference-server": "vllm"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai",
			Ports: []corev1.ContainerPort{{ContainerPort: 8000}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.9.9.9"},
	}
}
