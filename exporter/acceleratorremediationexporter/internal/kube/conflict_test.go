package kube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

// A concurrent writer changes the node between the cordon's read and its
// update: a loopback proxy in front of the real API server makes that
// write (as the admin) just before it forwards the cordon's first PUT, so
// the API server answers 409 Conflict for real. The cordon reads again and
// succeeds, keeping the other writer's change.
func TestCordonRetriesAConflict(t *testing.T) {
	ctx := context.Background()
	mkNode(t, "conflict-1", "p5.48xlarge")
	target, err := url.Parse(server.Host)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(server.CA))
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	var once sync.Once
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Path == "/api/v1/nodes/conflict-1" {
			once.Do(func() {
				n, err := server.Client("").CoreV1().Nodes().Get(ctx, "conflict-1", metav1.GetOptions{})
				require.NoError(t, err)
				n.Labels["autoscaler.example.com/seen"] = "true"
				_, err = server.Client("").CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
				require.NoError(t, err)
			})
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()

	remote := server.Config(remediator)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: front.URL, BearerToken: remote.BearerToken})
	require.NoError(t, err)
	c := &Cluster{CS: cs, Prefix: prefix, Component: "otelcol-accel-remediator"}
	p := gpuPlan(t, 79, plan.Subject{Node: "conflict-1"})
	out, err := Cordon{c}.Run(ctx, p, false)
	require.NoError(t, err)
	assert.Contains(t, out.Detail, "(1 conflicting updates retried)")
	n, err := server.Client("").CoreV1().Nodes().Get(ctx, "conflict-1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, n.Spec.Unschedulable)
	assert.Equal(t, "true", n.Labels["autoscaler.example.com/seen"], "the other writer's change is kept")
}
