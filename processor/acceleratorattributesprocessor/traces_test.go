package acceleratorattributesprocessor

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
)

// podIPs gives the API's pods of kubernetesNode their addresses, and adds a
// web pod that holds no accelerator and a host-network pod that shares the
// node's address.
func podIPs(objects []runtime.Object) []runtime.Object {
	ips := map[string]string{
		"llama-train-0":     "10.0.1.10",
		"vllm-6d4f9-abcde":  "10.0.1.11",
		"embed-7c8d5-xyz12": "10.0.1.12",
		"notebook-0":        "10.0.1.13",
		"etl-a":             "10.0.1.14",
		"etl-b":             "10.0.1.15",
	}
	for _, o := range objects {
		if p, ok := o.(*corev1.Pod); ok && ips[p.Name] != "" {
			p.Status.Phase = corev1.PodRunning
			p.Status.PodIP = ips[p.Name]
			p.Status.PodIPs = []corev1.PodIP{{IP: ips[p.Name]}}
		}
	}
	web := ownedPod("serve", "web-0", "uid-web", "ReplicaSet", "web-5d9c8", map[string]string{"team": "search"})
	web.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.1.20", PodIPs: []corev1.PodIP{{IP: "10.0.1.20"}}}
	hostNet := ownedPod("kube-system", "node-agent", "uid-agent", "DaemonSet", "agent", nil)
	hostNet.Spec.HostNetwork = true
	hostNet.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "192.168.0.5", PodIPs: []corev1.PodIP{{IP: "192.168.0.5"}}}
	return append(objects, web, hostNet)
}

func spansFrom(td ptrace.Traces, service string, attrs []kv) {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	putAttrs(rs.Resource().Attributes(), attrs)
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetName("POST /v1/chat/completions")
	span.Attributes().PutStr("gen_ai.request.model", "meta-llama/Llama-3.1-8B-Instruct")
}

func strSlice(t *testing.T, m pcommon.Map, key string) []string {
	t.Helper()
	v, ok := m.Get(key)
	require.True(t, ok, "%s missing", key)
	require.Equal(t, pcommon.ValueTypeSlice, v.Type(), key)
	var out []string
	for i := 0; i < v.Slice().Len(); i++ {
		out = append(out, v.Slice().At(i).Str())
	}
	return out
}

func TestTracesGainTheirPodsDevices(t *testing.T) {
	h := newHarness(t, podIPs(kubernetesNode())...)
	kubernetesKubelet(h.kubelet)
	h.start()
	// The device metrics teach where migA sits on gpu3 (gi 1), as the
	// receivers' resources do on a real node.
	h.process(kubernetesBatch())

	td := ptrace.NewTraces()
	spansFrom(td, "vllm", []kv{{accelschema.AttrK8sPodUID, vllmUID}})
	spansFrom(td, "notebook", []kv{{accelschema.AttrK8sNamespaceName, "ml"}, {accelschema.AttrK8sPodName, "notebook-0"}})
	spansFrom(td, "etl", []kv{{accelschema.AttrK8sPodIP, "10.0.1.14"}})
	spansFrom(td, "web", []kv{{accelschema.AttrK8sPodUID, "uid-web"}})
	spansFrom(td, "elsewhere", []kv{{accelschema.AttrK8sNamespaceName, "serve"}, {accelschema.AttrK8sPodName, "vllm-on-another-node"}})
	spansFrom(td, "trainer", nil) // named by its connection only
	want := ptrace.NewTraces()
	td.CopyTo(want)

	ctx := client.NewContext(context.Background(), client.Info{Addr: &net.TCPAddr{IP: net.ParseIP("10.0.1.10"), Port: 43120}})
	got, err := h.p.processTraces(ctx, td)
	require.NoError(t, err)
	rss := got.ResourceSpans()
	require.Equal(t, 6, rss.Len())

	// A time-sliced replica of gpu1.
	vllm := rss.At(0).Resource().Attributes()
	assert.Equal(t, []string{gpu1}, strSlice(t, vllm, accelschema.AttrAcceleratorHWIDs))
	assert.Equal(t, []string{gpu1}, strSlice(t, vllm, accelschema.AttrAcceleratorHWParent))
	assert.Equal(t, "time_slicing", strAttr(vllm, accelschema.AttrPartitionType))
	assert.Equal(t, gpu1+"::0", strAttr(vllm, accelschema.AttrPartitionID))
	assert.Equal(t, nodeName, strAttr(vllm, accelschema.AttrK8sNodeName))
	assert.Equal(t, "us-east-1a", strAttr(vllm, accelschema.AttrCloudZone))
	assert.Equal(t, "search", strAttr(vllm, accelschema.AttrTeam))
	assert.Equal(t, "vllm", strAttr(vllm, "service.name"), "what the application said is kept")

	// A MIG instance, with its GPU from the topology the metrics taught.
	nb := rss.At(1).Resource().Attributes()
	assert.Equal(t, []string{migA}, strSlice(t, nb, accelschema.AttrAcceleratorHWIDs))
	assert.Equal(t, []string{gpu3}, strSlice(t, nb, accelschema.AttrAcceleratorHWParent))
	assert.Equal(t, "mig", strAttr(nb, accelschema.AttrPartitionType))
	assert.Equal(t, "1", strAttr(nb, accelschema.AttrPartitionID))
	assert.Equal(t, vllmUID, strAttr(vllm, accelschema.AttrK8sPodUID))

	// A DRA claim, found by the pod's IP.
	etl := rss.At(2).Resource().Attributes()
	assert.Equal(t, []string{gpu4}, strSlice(t, etl, accelschema.AttrAcceleratorHWIDs))
	assert.Equal(t, "dra", strAttr(etl, accelschema.AttrPartitionType))
	assert.Equal(t, "etl-a", strAttr(etl, accelschema.AttrK8sPodName))
	assert.Equal(t, "batch", strAttr(etl, accelschema.AttrK8sNamespaceName))

	// No accelerator, or not a pod of this node: exactly as they came.
	for _, i := range []int{3, 4} {
		assert.Equal(t, want.ResourceSpans().At(i).Resource().Attributes().AsRaw(), rss.At(i).Resource().Attributes().AsRaw(),
			"%s untouched", strAttr(rss.At(i).Resource().Attributes(), "service.name"))
	}

	// Named only by the connection: the training pod's whole GPU.
	train := rss.At(5).Resource().Attributes()
	assert.Equal(t, []string{gpu0}, strSlice(t, train, accelschema.AttrAcceleratorHWIDs))
	assert.Equal(t, "none", strAttr(train, accelschema.AttrPartitionType))
	_, hasID := train.Get(accelschema.AttrPartitionID)
	assert.False(t, hasID)
	assert.Equal(t, "llama-train-0", strAttr(train, accelschema.AttrK8sPodName))

	// Spans themselves are not touched.
	for i := 0; i < rss.Len(); i++ {
		assert.Equal(t, want.ResourceSpans().At(i).ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw(),
			rss.At(i).ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw())
	}
}

func TestTracesByConnectionSkipPodsWithoutAccelerators(t *testing.T) {
	h := newHarness(t, podIPs(kubernetesNode())...)
	kubernetesKubelet(h.kubelet)
	h.start()
	for _, addr := range []string{"10.0.1.20", "192.168.0.5", "10.9.9.9"} {
		td := ptrace.NewTraces()
		spansFrom(td, "svc", nil)
		want := ptrace.NewTraces()
		td.CopyTo(want)
		ctx := client.NewContext(context.Background(), client.Info{Addr: &net.TCPAddr{IP: net.ParseIP(addr), Port: 5000}})
		got, err := h.p.processTraces(ctx, td)
		require.NoError(t, err)
		assert.Equal(t, want.ResourceSpans().At(0).Resource().Attributes().AsRaw(), got.ResourceSpans().At(0).Resource().Attributes().AsRaw(),
			"%s: a web pod, a host-network pod (the node's address) and an unknown address", addr)
	}
}

func TestTracesHoldingsOfSeveralDevices(t *testing.T) {
	h := newHarness(t, podIPs(kubernetesNode())...)
	h.kubelet.SetPods(prt.Pod("ml", "llama-train-0",
		prt.Container("trainer", prt.Devices("nvidia.com/gpu", gpu2, gpu0)),
		prt.Container("sidecar", prt.Devices("nvidia.com/mig-3g.40gb", migB))))
	h.kubelet.SetAllocatable(prt.Devices("nvidia.com/gpu", gpu0, gpu2), prt.Devices("nvidia.com/mig-3g.40gb", migA, migB))
	h.start()
	h.process(kubernetesBatch())

	td := ptrace.NewTraces()
	spansFrom(td, "trainer", []kv{{accelschema.AttrK8sPodUID, "uid-train"}, {accelschema.AttrPartitionType, "stale"}, {accelschema.AttrPartitionID, "stale"}})
	got, err := h.p.processTraces(context.Background(), td)
	require.NoError(t, err)
	attrs := got.ResourceSpans().At(0).Resource().Attributes()
	assert.Equal(t, []string{gpu0, gpu2, migB}, strSlice(t, attrs, accelschema.AttrAcceleratorHWIDs), "every container's devices, sorted")
	assert.Equal(t, []string{gpu0, gpu2, gpu3}, strSlice(t, attrs, accelschema.AttrAcceleratorHWParent))
	_, hasType := attrs.Get(accelschema.AttrPartitionType)
	_, hasID := attrs.Get(accelschema.AttrPartitionID)
	assert.False(t, hasType, "whole GPUs and a MIG instance have no one partition type")
	assert.False(t, hasID, "several holdings have no one partition id")
}
