package k8sclient_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient/k8sclienttest"
)

// These tests script the API with client-go's fake clientset, through
// k8sclienttest (an external test package: k8sclienttest imports k8sclient).

func acquireSynced(t *testing.T, r *k8sclient.Registry, api k8sclient.APIConfig, node string, kinds ...k8sclient.Kind) *k8sclient.Informers {
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

// Providers replace the client and informers: client-go's fake clientset
// refusing pods stands for an API server without the RBAC rule.
func TestForbiddenWatchNamesTheMissingRule(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
			errors.New(`User "system:serviceaccount:obs:otelcol" cannot list resource "pods"`))
	})
	client.PrependReactor("list", "resourceslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceslices"}, "", errors.New("no"))
	})
	r := k8sclient.NewRegistry(k8sclienttest.Providers(client))
	h, err := r.Acquire(k8sclient.APIConfig{AuthType: k8sclient.AuthServiceAccount}, "gpu-node-1")
	require.NoError(t, err)
	t.Cleanup(h.Release)
	for _, k := range []k8sclient.Kind{k8sclient.Pods, k8sclient.Nodes, k8sclient.ResourceSlices} {
		_, err := h.Informer(k)
		require.NoError(t, err)
	}

	var problems []k8sclient.Problem
	require.Eventually(t, func() bool { problems = h.Problems(); return len(problems) == 2 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, k8sclient.Pods, problems[0].Kind)
	assert.Contains(t, problems[0].Hint, "get, list, watch on pods (apiGroups: [\"\"])")
	assert.Equal(t, k8sclient.ResourceSlices, problems[1].Kind)
	assert.Contains(t, problems[1].Hint, "on resourceslices (apiGroups: [resource.k8s.io])")
	assert.False(t, h.Synced())

	// Another component sees only the kinds it asked for.
	nodesOnly, err := r.Acquire(k8sclient.APIConfig{AuthType: k8sclient.AuthServiceAccount}, "gpu-node-1")
	require.NoError(t, err)
	t.Cleanup(nodesOnly.Release)
	_, err = nodesOnly.Informer(k8sclient.Nodes)
	require.NoError(t, err)
	assert.Empty(t, nodesOnly.Problems())
}

func TestAcquireReportsTheClientError(t *testing.T) {
	r := k8sclient.NewRegistry(k8sclient.Providers{NewClient: func(k8sclient.APIConfig) (k8sclient.Client, error) { return nil, errors.New("no kubeconfig") }})
	_, err := r.Acquire(k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig}, "n")
	assert.ErrorContains(t, err, "no kubeconfig")
	assert.Zero(t, r.Holders(k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig}, "n"))

	_, err = k8sclient.NewRegistry(k8sclient.Providers{}).Acquire(k8sclient.APIConfig{AuthType: "token"}, "n")
	assert.ErrorContains(t, err, "is not one of")
}

// An injected informer provider is asked once per key, however many
// components hold it, with the node and resync period.
func TestInformerProviderIsInjectable(t *testing.T) {
	var calls atomic.Int32
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-1"}})
	providers := k8sclienttest.Providers(client)
	providers.Informers = map[k8sclient.Kind]k8sclient.InformerProvider{k8sclient.Nodes: func(c k8sclient.Client, node string, resync time.Duration) cache.SharedIndexInformer {
		calls.Add(1)
		assert.Equal(t, "gpu-node-1", node)
		assert.Equal(t, 10*time.Minute, resync)
		return k8sclient.DefaultInformers()[k8sclient.Nodes](c, node, resync)
	}}
	r := k8sclient.NewRegistry(providers)
	api := k8sclient.APIConfig{AuthType: k8sclient.AuthServiceAccount}
	acquireSynced(t, r, api, "gpu-node-1", k8sclient.Nodes)
	h := acquireSynced(t, r, api, "gpu-node-1", k8sclient.Nodes)
	assert.Equal(t, int32(1), calls.Load())
	inf, _ := h.Informer(k8sclient.Nodes)
	_, ok, _ := inf.GetStore().GetByKey("gpu-node-1")
	assert.True(t, ok)

	_, err := h.Informer("leases")
	assert.ErrorContains(t, err, `no informer for "leases"`)
}
