package inferencereceiver

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient/k8sclienttest"
)

func servingPod(name, uid, node, port string, annotations map[string]string) *corev1.Pod {
	a := map[string]string{"otelcol-accel.io/metrics-port": port}
	for k, v := range annotations {
		a[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "llm", UID: types.UID(uid), Annotations: a,
			Labels: map[string]string{"app.kubernetes.io/component": "inference-server"}},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1"},
	}
}

func portOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Port()
}

func discoveryConfig() *Config {
	cfg := createDefaultConfig()
	cfg.Discovery.Enabled = true
	cfg.Discovery.NodeName = "gpu-node-1"
	cfg.Discovery.LabelSelector = "app.kubernetes.io/component=inference-server"
	return cfg
}

func withClientset(c kubernetes.Interface) func(*options) { return withClient(k8sclienttest.Client(c)) }

func withClient(c k8sclient.Client) func(*options) {
	return withNewClient(func(k8sclient.APIConfig) (k8sclient.Client, error) { return c, nil })
}

// withNewClient gives the receiver informers of its own, over the clients
// newClient builds.
func withNewClient(newClient func(k8sclient.APIConfig) (k8sclient.Client, error)) func(*options) {
	return func(o *options) { o.registry = k8sclient.NewRegistry(k8sclient.Providers{NewClient: newClient}) }
}

// TestDiscoveredPodsCarryPodIdentity: pods on this node selected by label or
// annotation are scraped, and their resources carry the pod's identity so
// the attributes processor can join them to the pod's devices.
func TestDiscoveredPodsCarryPodIdentity(t *testing.T) {
	vllm := newFakeServer(t, readFixture(t, "vllm_custom_buckets.txt"))
	tgi := newFakeServer(t, readFixture(t, "tgi.txt"))
	client := fake.NewClientset(
		servingPod("granite-0", "uid-granite-0", "gpu-node-1", portOf(t, vllm.URL), nil),
		servingPod("zephyr-0", "uid-zephyr-0", "gpu-node-1", portOf(t, tgi.URL), map[string]string{
			"otelcol-accel.io/inference-server": "tgi",
			"otelcol-accel.io/model":            "HuggingFaceH4/zephyr-7b-beta",
		}),
		servingPod("elsewhere-0", "uid-elsewhere-0", "gpu-node-2", portOf(t, vllm.URL), nil),
	)
	h := newHarness(t, discoveryConfig(), withClientset(client))
	require.Eventually(t, h.scraper.watcher.Synced, 5*time.Second, 10*time.Millisecond)

	md := h.scrape(t)
	require.Equal(t, 2, md.ResourceMetrics().Len())
	byPod := map[string]map[string]any{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		attrs := md.ResourceMetrics().At(i).Resource().Attributes().AsRaw()
		byPod[attrs["k8s.pod.name"].(string)] = attrs
	}
	assert.Equal(t, map[string]any{
		"gen_ai.provider.name":  "vllm",
		"gen_ai.request.model":  "granite-3.3-8b",
		"gen_ai.operation.name": "chat",
		"server.address":        "127.0.0.1",
		"server.port":           mustAtoi(t, portOf(t, vllm.URL)),
		"k8s.pod.name":          "granite-0",
		"k8s.pod.uid":           "uid-granite-0",
		"k8s.namespace.name":    "llm",
		"k8s.node.name":         "gpu-node-1",
	}, byPod["granite-0"])
	assert.Equal(t, "tgi", byPod["zephyr-0"]["gen_ai.provider.name"])
	assert.Equal(t, "HuggingFaceH4/zephyr-7b-beta", byPod["zephyr-0"]["gen_ai.request.model"])
	assert.Equal(t, "uid-zephyr-0", byPod["zephyr-0"]["k8s.pod.uid"])

	// The vLLM pod goes away while its server is down: its failure is
	// forgotten with it, and the component is OK again.
	vllm.serve(503, "")
	h.clock.advance(15 * time.Second)
	h.scrape(t)
	require.Equal(t, componentstatus.StatusRecoverableError, h.host.Last().Status())
	require.NoError(t, client.CoreV1().Pods("llm").Delete(context.Background(), "granite-0", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		ts, _ := h.scraper.watcher.Targets()
		return len(ts) == 1
	}, 5*time.Second, 10*time.Millisecond)
	h.clock.advance(15 * time.Second)
	assert.Equal(t, 1, h.scrape(t).ResourceMetrics().Len())
	assert.Equal(t, componentstatus.StatusOK, h.host.Last().Status())
	assert.Len(t, h.scraper.targets, 1, "state of the deleted pod is dropped")
}

func mustAtoi(t *testing.T, s string) int64 {
	p, err := net.LookupPort("tcp", s)
	require.NoError(t, err)
	return int64(p)
}

// An API server that never answers is reported once the sync timeout has
// passed; static targets are scraped meanwhile.
func TestKubernetesAPIUnreachable(t *testing.T) {
	static := newFakeServer(t, readFixture(t, "sglang.txt"))
	client, err := k8sclient.NewClientForConfig(&rest.Config{Host: "http://" + closedPort(t), Timeout: time.Second})
	require.NoError(t, err)
	cfg := discoveryConfig()
	cfg.Targets = []TargetConfig{{Endpoint: static.URL, Server: "sglang"}}
	h := newHarness(t, cfg, withClient(client))

	assert.Equal(t, 1, h.scrape(t).ResourceMetrics().Len())
	assert.Empty(t, h.host.Statuses(), "not yet past sync_timeout")

	h.clock.advance(cfg.Discovery.SyncTimeout)
	assert.Equal(t, 1, h.scrape(t).ResourceMetrics().Len())
	ev := h.host.Last()
	require.NotNil(t, ev)
	assert.Equal(t, componentstatus.StatusRecoverableError, ev.Status())
	assert.Contains(t, ev.Err().Error(), "Kubernetes API: pods of node gpu-node-1 not listed within 30s")
}

func TestPodWithBadAnnotationIsReportedNotScraped(t *testing.T) {
	client := fake.NewClientset(servingPod("x-0", "uid-x-0", "gpu-node-1", "8000", map[string]string{
		"otelcol-accel.io/inference-server": "llamacpp",
	}))
	h := newHarness(t, discoveryConfig(), withClientset(client))
	require.Eventually(t, h.scraper.watcher.Synced, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, 0, h.scrape(t).ResourceMetrics().Len())
	h.clock.advance(15 * time.Second)
	h.scrape(t)
	warns := h.logs.FilterMessage("Inference pod selected but not scraped").All()
	require.Len(t, warns, 1, "once per interval")
	assert.Contains(t, warns[0].ContextMap()["error"], `pod llm/x-0: annotation otelcol-accel.io/inference-server="llamacpp" is not a known server kind`)
}

// A sidecar (or a generated list) names the pod of a static target; its
// resources carry the pod's identity just as discovered ones do.
func TestStaticTargetWithPodIdentity(t *testing.T) {
	srv := newFakeServer(t, readFixture(t, "sglang.txt"))
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: "sglang",
		Pod: PodConfig{Name: "sglang-0", Namespace: "llm", UID: "uid-sglang-0"}}))
	md := h.scrape(t)
	require.Equal(t, 1, md.ResourceMetrics().Len())
	attrs := md.ResourceMetrics().At(0).Resource().Attributes().AsRaw()
	assert.Equal(t, "uid-sglang-0", attrs["k8s.pod.uid"])
	assert.Equal(t, "sglang-0", attrs["k8s.pod.name"])
	assert.Equal(t, "llm", attrs["k8s.namespace.name"])
	assert.NotContains(t, attrs, "k8s.node.name", "not given, not invented")
}

// TestDiscoveryWithoutKubernetesDegrades: the node agent runs on machines
// that are not Kubernetes nodes too. No node name, or no client (serviceAccount
// auth outside a cluster), must not stop the receiver: static targets are
// still scraped, the status is recoverable with one clear message, and a
// client that can be built later is picked up.
func TestDiscoveryWithoutKubernetesDegrades(t *testing.T) {
	vllm := newFakeServer(t, readFixture(t, "vllm_custom_buckets.txt"))

	t.Run("no node name", func(t *testing.T) {
		cfg := discoveryConfig()
		cfg.Discovery.NodeName = ""
		cfg.Targets = []TargetConfig{{Endpoint: vllm.URL, Server: "vllm"}}
		h := newHarness(t, cfg, withClientset(fake.NewClientset()))
		md := h.scrape(t)
		h.scrape(t)
		assert.Equal(t, 1, md.ResourceMetrics().Len(), "the static target is still scraped")
		require.NotNil(t, h.host.Last())
		assert.Equal(t, componentstatus.StatusRecoverableError, h.host.Last().Status())
		assert.Contains(t, h.host.Last().Err().Error(), "node_name is empty")
		assert.Equal(t, 1, h.logs.FilterField(zap.String("target", "Kubernetes API")).Len(), "one message, not one per scrape")
	})

	t.Run("no client, then a client", func(t *testing.T) {
		attempts := 0
		var client kubernetes.Interface
		h := newHarness(t, discoveryConfig(), withNewClient(func(k8sclient.APIConfig) (k8sclient.Client, error) {
			attempts++
			if client == nil {
				return nil, rest.ErrNotInCluster
			}
			return k8sclienttest.Client(client), nil
		}))
		h.scrape(t)
		require.NotNil(t, h.host.Last())
		assert.Equal(t, componentstatus.StatusRecoverableError, h.host.Last().Status())
		assert.Contains(t, h.host.Last().Err().Error(), rest.ErrNotInCluster.Error())

		// Within clientRetry nothing is retried; after it, the new client is used.
		h.scrape(t)
		assert.Equal(t, 1, attempts)
		client = fake.NewClientset(servingPod("granite-0", "uid-granite-0", "gpu-node-1", portOf(t, vllm.URL), nil))
		h.clock.advance(clientRetry)
		h.scrape(t)
		assert.Equal(t, 2, attempts)
		require.NotNil(t, h.scraper.watcher)
		require.Eventually(t, h.scraper.watcher.Synced, 5*time.Second, 10*time.Millisecond)
		md := h.scrape(t)
		assert.Equal(t, 1, md.ResourceMetrics().Len(), "the discovered pod is scraped once the API answers")
	})
}
