package k8sclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

func TestBurstFor(t *testing.T) {
	assert.Equal(t, 40, burstFor(20, 40), "set: kept")
	assert.Equal(t, 10, burstFor(5, 0), "client-go's default")
	assert.Equal(t, 10, burstFor(0.5, 0))
	assert.Equal(t, 26, burstFor(25.5, 0), "a second's requests")
}

// kube_api_qps without kube_api_burst is valid (Check lets it through), so
// the client must start with it; and the limit is the agent's: every API
// group's REST client waits on the same limiter.
func TestOneRateLimiter(t *testing.T) {
	c, err := NewClientForConfig(&rest.Config{Host: "http://127.0.0.1:1", QPS: 50})
	require.NoError(t, err, "kube_api_qps alone")
	core, err := c.rest(corev1.SchemeGroupVersion)
	require.NoError(t, err)
	apps, err := c.rest(appsv1.SchemeGroupVersion)
	require.NoError(t, err)
	require.NotNil(t, core.GetRateLimiter())
	assert.Same(t, core.GetRateLimiter(), apps.GetRateLimiter(), "one limiter for the core and apps groups")
	assert.Equal(t, float32(50), core.GetRateLimiter().QPS())
	assert.Equal(t, 50, c.config.Burst)
}

// The dynamic client (custom resources) waits on the same limiter: once
// the typed clients took every token, its request is refused before it is
// sent, where a limiter of its own would have let it through.
func TestDynamicSharesTheRateLimiter(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"karpenter.sh/v1","kind":"NodeClaimList","metadata":{},"items":[]}`))
	}))
	t.Cleanup(srv.Close)
	// A token every 1000 s: a burst of 10, then none within the test.
	c, err := NewClientForConfig(&rest.Config{Host: srv.URL, QPS: 0.001})
	require.NoError(t, err)
	dyn, err := c.Dynamic()
	require.NoError(t, err)
	gvr := schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "the server answers")
	require.Equal(t, int32(1), requests.Load())

	core, err := c.rest(corev1.SchemeGroupVersion)
	require.NoError(t, err)
	for core.GetRateLimiter().TryAccept() {
	}
	_, err = dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	require.Error(t, err, "no token left for the dynamic client either")
	assert.Contains(t, err.Error(), "rate limiter")
	assert.Equal(t, int32(1), requests.Load(), "refused before it was sent")
}

// Discovery ends with its caller's context (Release cancels WatchOptional's),
// not only at discovery's own 32 s timeout.
func TestDiscoveryEndsWithItsContext(t *testing.T) {
	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done() // hangs until the client gives up
	}))
	t.Cleanup(srv.Close)
	c, err := NewClientForConfig(&rest.Config{Host: srv.URL})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err = c.ServerResourcesForGroupVersion(ctx, "karpenter.sh/v1")
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
}
