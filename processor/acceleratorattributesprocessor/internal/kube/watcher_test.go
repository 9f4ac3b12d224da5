package kube

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient/k8sclienttest"
)

func servedDRA(c *fake.Clientset) {
	c.Resources = []*metav1.APIResourceList{{GroupVersion: "resource.k8s.io/v1",
		APIResources: []metav1.APIResource{{Name: "resourceclaims"}, {Name: "resourceslices"}}}}
}

// newWatcher runs the watcher on client-go's fake clientset, through a
// registry of its own.
func newWatcher(t *testing.T, client kubernetes.Interface, node string, dra bool) *Watcher {
	t.Helper()
	registry := k8sclient.NewRegistry(k8sclienttest.Providers(client))
	w, err := NewWatcher(registry, k8sclient.APIConfig{AuthType: k8sclient.AuthServiceAccount}, node, dra)
	require.NoError(t, err)
	require.False(t, w.Synced(), "not before Start")
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(w.Stop)
	return w
}

func TestWatcherSeesThisNodeOnly(t *testing.T) {
	node := "gpu-node-1"
	other := "gpu-node-2"
	client := fake.NewClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "ml", UID: "u1"}, Spec: corev1.PodSpec{NodeName: node}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: "ml", UID: "u2"}, Spec: corev1.PodSpec{NodeName: other}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"node.kubernetes.io/instance-type": "p5.48xlarge"}}},
		&resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s1"}, Spec: resourcev1.ResourceSliceSpec{NodeName: &node, Driver: "gpu.nvidia.com"}},
		&resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s2"}, Spec: resourcev1.ResourceSliceSpec{NodeName: &other, Driver: "gpu.nvidia.com"}},
		&resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "ml"}},
	)
	servedDRA(client)
	w := newWatcher(t, client, node, true)

	require.Eventually(t, w.Synced, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return len(w.Snapshot().Claims) == 1 }, 10*time.Second, 10*time.Millisecond)
	s := w.Snapshot()
	require.Len(t, s.Pods, 1)
	assert.Equal(t, "mine", s.Pods[0].Name)
	require.NotNil(t, s.Node)
	assert.Equal(t, "p5.48xlarge", s.Node.Labels["node.kubernetes.io/instance-type"])
	require.Len(t, s.Slices, 1)
	assert.Equal(t, "s1", s.Slices[0].Name)
	assert.True(t, s.DRA)
	assert.Empty(t, w.Problems())

	// A new pod is announced on Changed.
	for len(w.Changed()) > 0 {
		<-w.Changed()
	}
	_, err := client.CoreV1().Pods("ml").Create(context.Background(),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "ml"}, Spec: corev1.PodSpec{NodeName: node}}, metav1.CreateOptions{})
	require.NoError(t, err)
	select {
	case <-w.Changed():
	case <-time.After(10 * time.Second):
		t.Fatal("no change notification")
	}
}

func TestWatcherWithoutDRAAPI(t *testing.T) {
	client := fake.NewClientset() // discovery serves nothing: Kubernetes < 1.34
	w := newWatcher(t, client, "n", true)
	require.Eventually(t, w.Synced, 10*time.Second, 10*time.Millisecond)
	assert.False(t, w.Snapshot().DRA)
}

func TestForbiddenPodsNameTheMissingRBAC(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
			assertErr("User \"system:serviceaccount:obs:otelcol\" cannot list resource \"pods\""))
	})
	w := newWatcher(t, client, "n", false)

	var problems []k8sclient.Problem
	require.Eventually(t, func() bool { problems = w.Problems(); return len(problems) > 0 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, k8sclient.Pods, problems[0].Kind)
	assert.Contains(t, problems[0].Hint, "get, list, watch on pods")
	assert.False(t, w.Synced())
}

type assertErr string

func (e assertErr) Error() string { return string(e) }
