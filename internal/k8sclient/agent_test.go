package k8sclient_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kubeapi"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver"
)

// An agent running the attributes processor and the inference receiver's
// discovery on one node, both made by their factories as the collector
// makes them, opens one watch per kind on the simulator's API server: the
// pods both read are watched once. (Before the shared informers: two pod
// watches.) The watches end when the last of them shuts down.
func TestAgentOpensOneWatchPerKind(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	store, err := kubeapi.NewStore(kubeapi.Objects(f))
	require.NoError(t, err)
	api := kubeapi.NewServer(store)
	hs := httptest.NewServer(api)
	t.Cleanup(func() { api.Close(); hs.Close() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, kubeapi.WriteKubeconfig(kubeconfig, hs.URL, f.Cluster))
	apiConfig := k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig, KubeConfig: kubeconfig}
	var node string
	for _, n := range f.Nodes {
		if n.DRA {
			node = n.Name
			break
		}
	}
	require.NotEmpty(t, node, "the demo fleet has a DRA node")

	attrs := startAttributesProcessor(t, apiConfig, node)
	inference := startInferenceReceiver(t, apiConfig, node)
	assert.Equal(t, 2, k8sclient.Shared().Holders(apiConfig, node), "both components hold the node's informers")

	kinds := []string{"pods", "nodes", "resourceclaims", "resourceslices"}
	one := map[string]kubeapi.WatchCount{}
	for _, k := range kinds {
		one[k] = kubeapi.WatchCount{Started: 1, Open: 1}
	}
	assert.Eventually(t, func() bool { return equalCounts(api.Watches(), one, kinds) }, 10*time.Second, 10*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // no second watch comes late
	require.True(t, equalCounts(api.Watches(), one, kinds), "want one watch per kind, got %v", api.Watches())
	t.Logf("watches with both components running: %v", api.Watches())

	// The receiver shuts down first: the processor keeps its watches.
	require.NoError(t, inference())
	assert.Equal(t, 1, k8sclient.Shared().Holders(apiConfig, node))
	assert.Equal(t, 1, api.Watches()["pods"].Open)

	require.NoError(t, attrs())
	assert.Zero(t, k8sclient.Shared().Holders(apiConfig, node))
	require.Eventually(t, func() bool {
		for _, k := range kinds {
			if api.Watches()[k].Open != 0 {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "the last shutdown ends every watch")
}

func equalCounts(got, want map[string]kubeapi.WatchCount, kinds []string) bool {
	for _, k := range kinds {
		if got[k] != want[k] {
			return false
		}
	}
	return true
}

// startAttributesProcessor starts the processor and returns its shutdown.
func startAttributesProcessor(t *testing.T, api k8sclient.APIConfig, node string) (shutdown func() error) {
	t.Helper()
	factory := acceleratorattributesprocessor.NewFactory()
	cfg := factory.CreateDefaultConfig().(*acceleratorattributesprocessor.Config)
	cfg.NodeName = node
	cfg.PodResourcesSocket = "" // the API is the only source here
	cfg.MIGLookup = "none"
	cfg.KubernetesAPI.APIConfig = api
	require.NoError(t, cfg.Validate())
	p, err := factory.CreateMetrics(context.Background(), processortest.NewNopSettings(factory.Type()), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	return shutdownOnce(t, p)
}

// startInferenceReceiver starts the receiver and returns its shutdown.
func startInferenceReceiver(t *testing.T, api k8sclient.APIConfig, node string) (shutdown func() error) {
	t.Helper()
	factory := inferencereceiver.NewFactory()
	cfg := factory.CreateDefaultConfig().(*inferencereceiver.Config)
	cfg.Discovery.Enabled = true
	cfg.Discovery.NodeName = node
	cfg.Discovery.APIConfig = api
	cfg.InitialDelay = time.Hour // discovery only: no scrape in this test
	require.NoError(t, cfg.Validate())
	r, err := factory.CreateMetrics(context.Background(), receivertest.NewNopSettings(factory.Type()), cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	return shutdownOnce(t, r)
}

// shutdownOnce shuts c down when called, or when the test ends.
func shutdownOnce(t *testing.T, c component.Component) func() error {
	shutdown := sync.OnceValue(func() error { return c.Shutdown(context.Background()) })
	t.Cleanup(func() { _ = shutdown() })
	return shutdown
}
