package discovery

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// The informer runs against client-go's fake clientset: list, then watch.
func TestWatcherFollowsPods(t *testing.T) {
	client := fake.NewClientset(
		pod("vllm-0", annotated("otelcol-accel.io/inference-server", "vllm"), ports(corev1.ContainerPort{ContainerPort: 8000})),
		pod("sidecar", ports(corev1.ContainerPort{ContainerPort: 9000})),
		pod("elsewhere", annotated("otelcol-accel.io/inference-server", "vllm"), onNode("gpu-node-2"), ports(corev1.ContainerPort{ContainerPort: 8000})),
		pod("broken", annotated("otelcol-accel.io/inference-server", "vllm")),
	)
	w := NewWatcher(client, testRules(t, ""))
	w.Start()
	t.Cleanup(w.Stop)
	require.Eventually(t, w.Synced, 5*time.Second, 10*time.Millisecond)

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

func TestSlimPodKeepsWhatTargetsRead(t *testing.T) {
	full := pod("vllm-0", annotated("otelcol-accel.io/inference-server", "vllm"), labelled("app", "x"), ports(corev1.ContainerPort{ContainerPort: 8000}))
	full.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	full.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "HF_TOKEN", Value: "secret"}}
	obj, err := slimPod(full)
	require.NoError(t, err)
	slim := obj.(*corev1.Pod)
	assert.Empty(t, slim.ManagedFields)
	assert.Empty(t, slim.Spec.Containers[0].Env)
	r := testRules(t, "app=x")
	want, _, _ := r.Target(full)
	got, ok, err := r.Target(slim)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, want, got)
}

func TestKubeConfigAuth(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
contexts:
- name: sim
  context: {cluster: sim, user: reader}
- name: other
  context: {cluster: sim, user: reader, namespace: x}
current-context: sim
users:
- name: reader
  user: {token: read-only}
`), 0o600))
	cfg, err := APIConfig{AuthType: AuthKubeConfig, KubeConfig: path}.RestConfig()
	require.NoError(t, err)
	assert.Equal(t, "https://127.0.0.1:6443", cfg.Host)
	// client-go reads credentials only for TLS endpoints.
	assert.Equal(t, "read-only", cfg.BearerToken)

	_, err = APIConfig{AuthType: AuthKubeConfig, KubeConfig: path, Context: "missing"}.RestConfig()
	assert.ErrorContains(t, err, "missing")
	_, err = APIConfig{AuthType: AuthKubeConfig, KubeConfig: filepath.Join(dir, "absent")}.RestConfig()
	assert.ErrorContains(t, err, "absent")
}

func TestAuthTypes(t *testing.T) {
	assert.NoError(t, APIConfig{AuthType: AuthServiceAccount}.Check())
	assert.EqualError(t, APIConfig{AuthType: "tls"}.Check(), `auth_type "tls": use serviceAccount, kubeConfig or none`)

	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err := APIConfig{AuthType: AuthServiceAccount}.RestConfig()
	assert.ErrorContains(t, err, "in-cluster Kubernetes config")
	_, err = APIConfig{AuthType: AuthNone}.RestConfig()
	assert.ErrorContains(t, err, "KUBERNETES_SERVICE_HOST")

	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	cfg, err := APIConfig{AuthType: AuthNone}.RestConfig()
	require.NoError(t, err)
	assert.Equal(t, "https://10.96.0.1:443", cfg.Host)
}
