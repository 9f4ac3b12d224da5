package k8sclienttest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
)

// recording is a k8sclient.Client that keeps the last list-watch it made.
type recording struct {
	k8sclient.Client
	gvr schema.GroupVersionResource
	lw  cache.ListerWatcher
}

func (r *recording) ListWatch(gvr schema.GroupVersionResource, tweak func(*metav1.ListOptions)) cache.ListerWatcher {
	r.gvr, r.lw = gvr, r.Client.ListWatch(gvr, tweak)
	return r.lw
}

// The adapter's table of typed clients is written by hand beside
// k8sclient's typed kinds: every kind DefaultInformers serves must list
// through it, or a test using the fake clientset would watch nothing.
func TestEveryDefaultKindLists(t *testing.T) {
	informers := k8sclient.DefaultInformers()
	require.NotEmpty(t, informers)
	for kind, provide := range informers {
		t.Run(string(kind), func(t *testing.T) {
			r := &recording{Client: Client(fake.NewClientset())}
			provide(r, "gpu-node-1", 0)
			require.NotNil(t, r.lw, "the informer lists through the client")
			assert.Equal(t, kind.GroupVersionResource(), r.gvr)
			list, err := cache.ToListerWithContext(r.lw).ListWithContext(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			assert.True(t, meta.IsListType(list), "%T", list)
		})
	}
}
