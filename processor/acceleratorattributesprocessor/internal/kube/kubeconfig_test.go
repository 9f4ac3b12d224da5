package kube

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
)

// apiServer is a minimal read-only Kubernetes API on loopback, like the
// fleet simulator's: list answers from JSON documents, watches that stay
// open with no events, no WatchList.
func apiServer(t *testing.T) *httptest.Server {
	lists := map[string]string{
		"/api/v1/pods": `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"100"},"items":[
			{"metadata":{"name":"vllm-0","namespace":"serve","uid":"u-1","resourceVersion":"90","labels":{"team":"search"}},
			 "spec":{"nodeName":"gpu-node-1","containers":[{"name":"vllm","image":"vllm"}]},"status":{"phase":"Running"}}]}`,
		"/api/v1/nodes": `{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"100"},"items":[
			{"metadata":{"name":"gpu-node-1","resourceVersion":"7","labels":{"node.kubernetes.io/instance-type":"p5.48xlarge"}}}]}`,
		"/apis/resource.k8s.io/v1/resourceclaims": `{"kind":"ResourceClaimList","apiVersion":"resource.k8s.io/v1","metadata":{"resourceVersion":"100"},"items":[]}`,
		"/apis/resource.k8s.io/v1/resourceslices": `{"kind":"ResourceSliceList","apiVersion":"resource.k8s.io/v1","metadata":{"resourceVersion":"100"},"items":[]}`,
		"/apis/resource.k8s.io/v1": `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"resource.k8s.io/v1","resources":[
			{"name":"resourceclaims","namespaced":true,"kind":"ResourceClaim","verbs":["get","list","watch"]},
			{"name":"resourceslices","namespaced":false,"kind":"ResourceSlice","verbs":["get","list","watch"]}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := lists[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("sendInitialEvents") == "true" {
			// client-go ≥ 0.35 first tries a streaming list (WatchList);
			// API servers without it refuse, and client-go falls back to
			// list + watch. A minimal API server must do the same.
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,` +
				`"message":"sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"}`))
			return
		}
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		if !json.Valid([]byte(body)) {
			t.Errorf("fixture for %s is not JSON", r.URL.Path)
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestKubeConfigAgainstALoopbackAPIServer(t *testing.T) {
	srv := apiServer(t)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster:
    server: `+srv.URL+`
contexts:
- name: sim
  context: {cluster: sim, user: sim}
current-context: sim
users:
- name: sim
  user: {}
`), 0o600))

	w, err := NewWatcher(k8sclient.NewRegistry(k8sclient.Providers{}),
		k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig, KubeConfig: path}, "gpu-node-1", true)
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(w.Stop)
	require.Eventually(t, w.Synced, 10*time.Second, 10*time.Millisecond)
	s := w.Snapshot()
	require.Len(t, s.Pods, 1)
	assert.Equal(t, "search", s.Pods[0].Labels["team"])
	assert.Equal(t, "p5.48xlarge", s.Node.Labels["node.kubernetes.io/instance-type"])
	assert.True(t, s.DRA)
	assert.Empty(t, w.Problems())
}
