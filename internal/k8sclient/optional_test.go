package k8sclient

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-accel/otelcol-accel/internal/kubetest"
)

// optionalSeen counts what WatchOptional reported and what the handler got.
type optionalSeen struct {
	watching, absent, failed atomic.Int32
	mu                       sync.Mutex
	names                    []string
	objs                     []any
}

func (s *optionalSeen) report() OptionalWatch {
	return OptionalWatch{
		Absent:   func(schema.GroupVersionResource) { s.absent.Add(1) },
		Failed:   func(error) { s.failed.Add(1) },
		Watching: func() { s.watching.Add(1) },
	}
}

func (s *optionalSeen) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if u, ok := o.(*unstructured.Unstructured); ok {
			s.names = append(s.names, u.GetName())
		}
		s.objs = append(s.objs, o)
	}}
}

// Two components asking for the same optional kinds on the simulator's API
// (which serves LeaderWorkerSets, NodeClaims and HPAs) share one watch of
// each; the custom resources arrive unstructured, slimmed.
func TestOptionalKindsAreWatchedOncePerProcess(t *testing.T) {
	s := startSim(t, nil)
	api := s.kubeconfig(t)
	reg := NewRegistry(Providers{})
	a, err := reg.Acquire(api, "")
	require.NoError(t, err)
	b, err := reg.Acquire(api, "")
	require.NoError(t, err)
	var seenA, seenB optionalSeen
	for _, kind := range []Kind{LeaderWorkerSets, NodeClaims, HorizontalPodAutoscalers} {
		a.WatchOptional(kind, seenA.handler(), seenA.report())
		b.WatchOptional(kind, seenB.handler(), seenB.report())
	}
	require.Eventually(t, func() bool { return seenA.watching.Load() == 3 && seenB.watching.Load() == 3 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		w := s.api.Watches()
		return w["leaderworkersets"].Open == 1 && w["nodeclaims"].Open == 1 && w["horizontalpodautoscalers"].Open == 1
	}, 10*time.Second, 10*time.Millisecond, "one watch per kind")

	lws := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
		"metadata": map[string]any{"namespace": "serve", "name": "llama-405b"},
		"spec": map[string]any{"replicas": int64(1), "leaderWorkerTemplate": map[string]any{"size": int64(2),
			"workerTemplate": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "vllm", "env": []any{map[string]any{"name": "HF_TOKEN", "value": "secret"}}}}}}}},
	}}
	require.NoError(t, s.api.Store().Apply(lws))
	require.Eventually(t, func() bool {
		seenA.mu.Lock()
		defer seenA.mu.Unlock()
		return len(seenA.names) == 1
	}, 10*time.Second, 10*time.Millisecond)
	seenA.mu.Lock()
	got := seenA.objs[0].(*unstructured.Unstructured)
	seenA.mu.Unlock()
	cs, _, _ := unstructured.NestedSlice(got.Object, "spec", "leaderWorkerTemplate", "workerTemplate", "spec", "containers")
	require.Len(t, cs, 1)
	assert.NotContains(t, cs[0], "env", "a template's environment is not kept")
	assert.Zero(t, seenA.absent.Load()+seenA.failed.Load())

	a.Release()
	b.Release()
	require.Eventually(t, func() bool { return s.api.Watches()["nodeclaims"].Open == 0 }, 10*time.Second, 10*time.Millisecond)
}

// A real API server without the LeaderWorkerSet and Karpenter CRDs: those
// kinds are reported absent once and not watched, nothing fails, and the
// HPAs (autoscaling/v2, always served) are watched.
func TestOptionalKindsAbsentOnARealAPIServer(t *testing.T) {
	if _, _, err := kubetest.Binaries(); err != nil {
		if kubetest.Required() {
			t.Fatal(err)
		}
		t.Skip("no kube-apiserver:", err)
	}
	dir := t.TempDir()
	srv, err := kubetest.Start(context.Background(), dir)
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	kc, err := srv.Kubeconfig("")
	require.NoError(t, err)
	reg := NewRegistry(Providers{})
	inf, err := reg.Acquire(APIConfig{AuthType: AuthKubeConfig, KubeConfig: kc}, "")
	require.NoError(t, err)
	t.Cleanup(inf.Release)
	var lws, claims, hpas optionalSeen
	inf.WatchOptional(LeaderWorkerSets, lws.handler(), lws.report())
	inf.WatchOptional(NodeClaims, claims.handler(), claims.report())
	inf.WatchOptional(HorizontalPodAutoscalers, hpas.handler(), hpas.report())
	require.Eventually(t, func() bool { return lws.absent.Load() == 1 && claims.absent.Load() == 1 && hpas.watching.Load() == 1 },
		30*time.Second, 20*time.Millisecond)
	assert.Zero(t, lws.watching.Load()+claims.watching.Load(), "absent kinds are not watched")
	assert.Zero(t, lws.failed.Load()+claims.failed.Load()+hpas.failed.Load())
	served, err := inf.Served(context.Background(), NodeClaims)
	require.NoError(t, err)
	assert.False(t, served)
}
