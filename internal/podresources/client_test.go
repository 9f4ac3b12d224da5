package podresources_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
)

func socketPath(t *testing.T) string {
	t.Helper()
	// Unix socket paths are limited to 108 bytes; t.TempDir() can be long.
	dir, err := os.MkdirTemp("", "pr")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "kubelet.sock")
}

func startServer(t *testing.T, sock string) *prt.Server {
	t.Helper()
	s := prt.New()
	require.NoError(t, s.Start(sock))
	t.Cleanup(s.Stop)
	return s
}

func newClient(t *testing.T, sock string, opts ...podresources.Option) *podresources.Client {
	t.Helper()
	c, err := podresources.New(sock, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestListReturnsDevicesAndDRAClaims(t *testing.T) {
	sock := socketPath(t)
	srv := startServer(t, sock)
	trainer := prt.Container("trainer",
		prt.Devices("nvidia.com/gpu", "GPU-aaaa", "GPU-bbbb"),
		prt.Devices("aws.amazon.com/neuroncore", "4", "5"))
	trainer.DynamicResources = append(trainer.DynamicResources,
		prt.DRAClaim("ml", "shared-gpu", prt.DRADevice("gpu.nvidia.com", "node-1", "gpu-3", "5f2c")))
	srv.SetPods(
		prt.Pod("ml", "train-0", trainer),
		prt.Pod("kube-system", "coredns-1", prt.Container("coredns")),
	)

	pods, err := newClient(t, sock).List(context.Background())
	require.NoError(t, err)
	require.Len(t, pods, 2)
	assert.Equal(t, podresources.Pod{Namespace: "ml", Name: "train-0", Containers: []podresources.Container{{
		Name: "trainer",
		Devices: []podresources.Devices{
			{ResourceName: "nvidia.com/gpu", IDs: []string{"GPU-aaaa", "GPU-bbbb"}},
			{ResourceName: "aws.amazon.com/neuroncore", IDs: []string{"4", "5"}},
		},
		Claims: []podresources.Claim{{Namespace: "ml", Name: "shared-gpu", Devices: []podresources.ClaimDevice{{
			Driver: "gpu.nvidia.com", Pool: "node-1", Device: "gpu-3", ShareID: "5f2c",
			CDIDevices: []string{"k8s.gpu.nvidia.com/device=gpu-3"},
		}}}},
	}}}, pods[0])
	assert.Equal(t, "coredns", pods[1].Containers[0].Name)
	assert.Empty(t, pods[1].Containers[0].Devices)
}

func TestAllocatableAndGet(t *testing.T) {
	sock := socketPath(t)
	srv := startServer(t, sock)
	srv.SetAllocatable(prt.Devices("nvidia.com/gpu", "GPU-aaaa::0", "GPU-aaaa::1"))
	srv.SetPods(prt.Pod("ml", "infer-0", prt.Container("vllm", prt.Devices("nvidia.com/gpu", "GPU-aaaa::1"))))
	c := newClient(t, sock)

	alloc, err := c.Allocatable(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []podresources.Devices{{ResourceName: "nvidia.com/gpu", IDs: []string{"GPU-aaaa::0", "GPU-aaaa::1"}}}, alloc)

	pod, err := c.Get(context.Background(), "ml", "infer-0")
	require.NoError(t, err)
	assert.Equal(t, "vllm", pod.Containers[0].Name)
	assert.Equal(t, []string{"GPU-aaaa::1"}, pod.Containers[0].Devices[0].IDs)
}

func TestOldKubeletCallsAreUnsupported(t *testing.T) {
	sock := socketPath(t)
	srv := startServer(t, sock)
	srv.SetUnsupported(true, true)
	c := newClient(t, sock)

	_, err := c.Get(context.Background(), "ml", "x")
	require.Error(t, err)
	assert.Equal(t, podresources.KindUnsupported, podresources.KindOf(err))

	_, err = c.Allocatable(context.Background())
	require.Error(t, err)
	assert.Equal(t, podresources.KindUnsupported, podresources.KindOf(err), "%v", err)
	var perr *podresources.Error
	require.ErrorAs(t, err, &perr)
	assert.Contains(t, perr.Hint(), "GetAllocatableResources")
}

func TestMissingSocketSaysWhatToMount(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "pod-resources", "kubelet.sock")
	c := newClient(t, sock, podresources.WithCallTimeout(2*time.Second))
	_, err := c.List(context.Background())
	require.Error(t, err)
	var perr *podresources.Error
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, podresources.KindSocketMissing, perr.Kind)
	assert.Contains(t, perr.Hint(), filepath.Dir(sock))
	assert.Contains(t, perr.Hint(), "hostPath")
	assert.Contains(t, err.Error(), "List")
}

func TestReconnectsWhenTheKubeletRecreatesTheSocket(t *testing.T) {
	sock := socketPath(t)
	srv := prt.New()
	require.NoError(t, srv.Start(sock))
	srv.SetPods(prt.Pod("ml", "before", prt.Container("c")))
	c := newClient(t, sock, podresources.WithMaxBackoff(200*time.Millisecond))

	pods, err := c.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "before", pods[0].Name)

	srv.Stop() // the kubelet restarts: the socket disappears
	_, err = c.List(context.Background())
	require.Error(t, err)
	assert.Contains(t, []podresources.Kind{podresources.KindSocketMissing, podresources.KindUnavailable}, podresources.KindOf(err), "%v", err)

	restarted := prt.New()
	restarted.SetPods(prt.Pod("ml", "after", prt.Container("c")))
	require.NoError(t, restarted.Start(sock))
	t.Cleanup(restarted.Stop)

	// The same client, with no re-dial by the caller, gets through again
	// once gRPC's backoff lets it retry.
	require.Eventually(t, func() bool {
		pods, err := c.List(context.Background())
		return err == nil && len(pods) == 1 && pods[0].Name == "after"
	}, 20*time.Second, 50*time.Millisecond)
}

func TestPermissionDeniedIsNamed(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may open any socket")
	}
	sock := socketPath(t)
	startServer(t, sock)
	require.NoError(t, os.Chmod(sock, 0))
	_, err := newClient(t, sock).List(context.Background())
	require.Error(t, err)
	assert.Equal(t, podresources.KindPermission, podresources.KindOf(err), "%v", err)
}

func TestEmptySocketPathIsRefused(t *testing.T) {
	_, err := podresources.New("")
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "empty"))
}
