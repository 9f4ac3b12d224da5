package discovery

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient/k8sclienttest"
)

// startWatcher runs the watcher on client through a registry of its own.
func startWatcher(t *testing.T, client kubernetes.Interface, rules Rules) *Watcher {
	t.Helper()
	registry := k8sclient.NewRegistry(k8sclienttest.Providers(client))
	w, err := NewWatcher(registry, k8sclient.APIConfig{AuthType: k8sclient.AuthServiceAccount}, rules)
	require.NoError(t, err)
	assert.False(t, w.Synced(), "not before Start")
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	require.Eventually(t, w.Synced, 5*time.Second, 10*time.Millisecond)
	return w
}

// The informer runs against client-go's fake clientset: list, then watch.
func TestWatcherFollowsPods(t *testing.T) {
	client := fake.NewClientset(
		pod("vllm-0", annotated("otelcol-accel.io/inference-server", "vllm"), ports(corev1.ContainerPort{ContainerPort: 8000})),
		pod("sidecar", ports(corev1.ContainerPort{ContainerPort: 9000})),
		pod("elsewhere", annotated("otelcol-accel.io/inference-server", "vllm"), onNode("gpu-node-2"), ports(corev1.ContainerPort{ContainerPort: 8000})),
		pod("broken", annotated("otelcol-accel.io/inference-server", "vllm")),
	)
	w := startWatcher(t, client, testRules(t, ""))

	targets, errs := w.Targets()
	require.Len(t, targets, 1)
	assert.Equal(t, "pod/uid-vllm-0:8000", targets[0].ID)
	assert.Equal(t, "http://10.1.2.3:8000/metrics", targets[0].Endpoint)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "pod serving/broken: no metrics port")

	// A new pod arrives through the watch; a deleted one goes.
	ctx := context.Background()
	added := pod("sglang-0", annotated("otelcol-accel.io/inference-server", "sglang"), ports(corev1.ContainerPort{ContainerPort: 30000}))
	added.Status.PodIP = "10.1.2.4"
	_, err := client.CoreV1().Pods("serving").Create(ctx, added, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, client.CoreV1().Pods("serving").Delete(ctx, "vllm-0", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		ts, _ := w.Targets()
		return len(ts) == 1 && ts[0].ID == "pod/uid-sglang-0:30000"
	}, 5*time.Second, 10*time.Millisecond)
}

// The shared informer caches pods without what no component reads (their
// containers' environment, say): a target resolves from the cached pod as
// from the full one.
func TestCachedPodResolvesAsTheFullPod(t *testing.T) {
	full := pod("vllm-0", annotated("otelcol-accel.io/inference-server", "vllm"), labelled("app", "x"), ports(corev1.ContainerPort{ContainerPort: 8000}))
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	full.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "HF_TOKEN", Value: "secret"}}
	r := testRules(t, "app=x")
	want, ok, err := r.Target(full)
	require.NoError(t, err)
	require.True(t, ok)

	w := startWatcher(t, fake.NewClientset(full.DeepCopy()), r)
	got, errs := w.Targets()
	require.Empty(t, errs)
	require.Len(t, got, 1)
	assert.Equal(t, want, got[0])
	cached, _, _ := w.pods.GetStore().GetByKey("serving/vllm-0")
	assert.Empty(t, cached.(*corev1.Pod).Spec.Containers[0].Env)
}
