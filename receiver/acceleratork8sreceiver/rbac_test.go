package acceleratork8sreceiver

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/firstrequest"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/kubetest"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver/internal/metadata"
)

func kubernetesDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "distributions", "otelcol-accel", "kubernetes")
}

// The shipped gateway ClusterRole (overlays/reliability) lets the receiver
// list and watch everything it asks for on a real API server: no watch
// fails. The agents' ClusterRole (base) does not: events, deployments,
// statefulsets and HPAs are refused there, which is why the gateway has
// its own account. The real API server serves no LeaderWorkerSet or
// NodeClaim CRD, so those are looked up and not watched.
func TestGatewayClusterRoleOnARealAPIServer(t *testing.T) {
	if _, _, err := kubetest.Binaries(); err != nil {
		if kubetest.Required() {
			t.Fatal(err)
		}
		t.Skip("no kube-apiserver:", err)
	}
	gateway := kubetest.ServiceAccount("otelcol-accel", "otelcol-accel-gateway")
	agent := kubetest.ServiceAccount("otelcol-accel", "otelcol-accel")
	ctx := context.Background()
	srv, err := kubetest.Start(ctx, t.TempDir(), gateway, agent)
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	admin := srv.Client("")
	_, err = admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "otelcol-accel"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, f := range []string{"overlays/reliability/gateway-rbac.yaml", "base/serviceaccount.yaml", "base/rbac.yaml"} {
		objs, err := kubetest.Decode(filepath.Join(kubernetesDir(), f))
		require.NoError(t, err, f)
		require.NoError(t, kubetest.Apply(ctx, admin, "otelcol-accel", objs...), f)
	}

	core, logged := observer.New(zap.InfoLevel)
	start := func(identity string) *k8sReceiver {
		kc, err := srv.Kubeconfig(identity)
		require.NoError(t, err)
		cfg := createDefaultConfig().(*Config)
		cfg.APIConfig = k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig, KubeConfig: kc}
		cfg.CollectionInterval = time.Hour
		set := receivertest.NewNopSettings(metadata.Type)
		set.Logger = zap.New(core)
		r := newReceiver(cfg, set, k8sclient.NewRegistry(k8sclient.Providers{}), firstrequest.New(), time.Now)
		r.metrics, r.logs = new(consumertest.MetricsSink), new(consumertest.LogsSink)
		require.NoError(t, r.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, r.Shutdown(ctx)) })
		return r
	}

	gw := start(gateway.Name)
	require.Eventually(t, func() bool {
		inf, err := gw.informers.Informer(k8sclient.HorizontalPodAutoscalers)
		return err == nil && inf.HasSynced() && gw.informers.Synced()
	}, 30*time.Second, 20*time.Millisecond, "every watch of the gateway's account lists")
	assert.Empty(t, gw.informers.Problems())

	ag := start(agent.Name)
	require.Eventually(t, func() bool { return len(ag.informers.Problems()) >= 3 }, 30*time.Second, 20*time.Millisecond)
	var refused []string
	for _, p := range ag.informers.Problems() {
		refused = append(refused, string(p.Kind))
	}
	for _, kind := range []string{"events", "deployments", "statefulsets"} {
		assert.True(t, slices.Contains(refused, kind), "the agents' account may not watch %s: %v", kind, refused)
	}
	ag.logProblems()
	warned := logged.FilterMessageSnippet("the watch of events fails: the collector's service account may not list/watch events").Len()
	assert.Equal(t, 1, warned, "the refused watch is logged with the rule to add")
	ag.logProblems()
	assert.Equal(t, 1, logged.FilterMessageSnippet("the watch of events fails").Len(), "rate-limited")
}
