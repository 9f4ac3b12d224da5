package acceleratorattributesprocessor

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
)

var errNoNVML = errors.New("NVML not available: ERROR_LIBRARY_NOT_FOUND")

const (
	gpu0 = "GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e50"
	gpu1 = "GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e51"
	gpu2 = "GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e52"
	gpu3 = "GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e53"
	gpu4 = "GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e54"
	gpu5 = "GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e55"
	migA = "MIG-4f5e6d7c-8b9a-5c4d-8e3f-2a1b0c9d8e71"
	migB = "MIG-4f5e6d7c-8b9a-5c4d-8e3f-2a1b0c9d8e72"

	vllmUID  = "6b3e0e2a-1c8d-4f4e-9b7a-2d5c8e1f0a01"
	embedUID = "6b3e0e2a-1c8d-4f4e-9b7a-2d5c8e1f0a02"
	cid      = "3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"
)

func yes() *bool { b := true; return &b }

func ownedPod(ns, name, uid, ownerKind, owner string, labels map[string]string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), Labels: labels},
		Spec: corev1.PodSpec{NodeName: nodeName}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: ownerKind, Name: owner, Controller: yes()}}
	}
	return p
}

// kubernetesNode is one H100 node with every way of holding a GPU.
func kubernetesNode() []runtime.Object {
	str := func(s string) *string { return &s }
	node := nodeName
	return []runtime.Object{
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{
			"node.kubernetes.io/instance-type": "p5.48xlarge",
			"topology.kubernetes.io/region":    "us-east-1",
			"topology.kubernetes.io/zone":      "us-east-1a",
			"nvidia.com/gpu.replicas":          "4",
			"nvidia.com/gpu.sharing-strategy":  "time-slicing",
			"nvidia.com/mig.strategy":          "mixed",
		}}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-0123456789abcdef0"}},
		ownedPod("ml", "llama-train-0", "uid-train", "StatefulSet", "llama-train",
			map[string]string{"team": "research", "otelcol-accel.io/workload-type": "training"}),
		ownedPod("serve", "vllm-6d4f9-abcde", vllmUID, "ReplicaSet", "vllm-6d4f9",
			map[string]string{"team": "search", "pod-template-hash": "6d4f9", "app": "vllm"}),
		ownedPod("serve", "embed-7c8d5-xyz12", embedUID, "ReplicaSet", "embed-7c8d5",
			map[string]string{"team": "search", "pod-template-hash": "7c8d5"}),
		ownedPod("ml", "notebook-0", "uid-nb", "Notebook", "alice", map[string]string{"team": "research"}),
		ownedPod("batch", "etl-a", "uid-etl-a", "Job", "etl-29012345", map[string]string{"team": "data"}),
		ownedPod("batch", "etl-b", "uid-etl-b", "Job", "etl-29012345", map[string]string{"team": "data"}),
		&resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: nodeName + "-gpu.nvidia.com"}, Spec: resourcev1.ResourceSliceSpec{
			Driver: "gpu.nvidia.com", Pool: resourcev1.ResourcePool{Name: nodeName, ResourceSliceCount: 1}, NodeName: &node,
			Devices: []resourcev1.Device{{Name: "gpu-4", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"type": {StringValue: str("gpu")}, "uuid": {StringValue: str(gpu4)}, "productName": {StringValue: str("NVIDIA H100 80GB HBM3")}}}}}},
		&resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "etl-shared-gpu"}, Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
				{Request: "gpu", Driver: "gpu.nvidia.com", Pool: nodeName, Device: "gpu-4"}}}},
			ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "etl-a", UID: "uid-etl-a"}, {Resource: "pods", Name: "etl-b", UID: "uid-etl-b"}}}},
	}
}

func kubernetesKubelet(s *prt.Server) {
	etlA := prt.Container("etl")
	etlA.DynamicResources = append(etlA.DynamicResources, prt.DRAClaim("batch", "etl-shared-gpu", prt.DRADevice("gpu.nvidia.com", nodeName, "gpu-4", "")))
	etlB := prt.Container("etl")
	etlB.DynamicResources = append(etlB.DynamicResources, prt.DRAClaim("batch", "etl-shared-gpu", prt.DRADevice("gpu.nvidia.com", nodeName, "gpu-4", "")))
	s.SetPods(
		prt.Pod("ml", "llama-train-0", prt.Container("trainer", prt.Devices("nvidia.com/gpu", gpu0))),
		prt.Pod("serve", "vllm-6d4f9-abcde", prt.Container("vllm", prt.Devices("nvidia.com/gpu", gpu1+"::0"))),
		prt.Pod("serve", "embed-7c8d5-xyz12", prt.Container("embed", prt.Devices("nvidia.com/gpu", gpu1+"::1"))),
		prt.Pod("ml", "notebook-0", prt.Container("jupyter", prt.Devices("nvidia.com/mig-3g.40gb", migA))),
		prt.Pod("batch", "etl-a", etlA),
		prt.Pod("batch", "etl-b", etlB),
		prt.Pod("kube-system", "nvidia-device-plugin-x", prt.Container("plugin")),
	)
	var replicas []string
	for i := 0; i < 4; i++ {
		replicas = append(replicas, gpu1+"::"+string(rune('0'+i)))
	}
	s.SetAllocatable(prt.Devices("nvidia.com/gpu", gpu0, gpu2), prt.Devices("nvidia.com/gpu", replicas...),
		prt.Devices("nvidia.com/mig-3g.40gb", migA, migB))
}

func kubernetesBatch() pmetric.Metrics {
	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0))
	addDevice(md, gpuAttrs(gpu1, 1), 4242, 4343, 1)
	addDevice(md, gpuAttrs(gpu2, 2))
	addDeviceReadings(md, gpuAttrs(gpu3, 3))
	addDevice(md, migAttrs(migA, gpu3, 3, 1, "3g.40gb", 0.5))
	addDevice(md, migAttrs(migB, gpu3, 3, 2, "3g.40gb", 0.5))
	addDevice(md, gpuAttrs(gpu4, 4))
	addInference(md, []kv{{accelschema.AttrK8sPodUID, vllmUID}, {accelschema.AttrK8sPodName, "vllm-6d4f9-abcde"},
		{accelschema.AttrK8sNamespaceName, "serve"}, {accelschema.AttrGenAIProviderName, accelschema.ServerVLLM},
		{accelschema.AttrGenAIRequestModel, "meta-llama/Llama-3.1-8B-Instruct"}})
	return md
}

func TestKubernetesNodeGolden(t *testing.T) {
	h := newHarness(t, kubernetesNode()...)
	kubernetesKubelet(h.kubelet)
	h.writeCgroup(4242, "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"+underscore(vllmUID)+".slice/cri-containerd-"+cid+".scope\n")
	h.writeCgroup(4343, "11:memory:/kubepods/burstable/pod"+embedUID+"/"+cid+"\n1:name=systemd:/kubepods/burstable/pod"+embedUID+"/"+cid+"\n")
	h.writeCgroup(1, "0::/system.slice/nvidia-persistenced.service\n")
	h.start()

	got := h.process(kubernetesBatch())

	compareGolden(t, "kubernetes.yaml", got)

	// The golden file is checked by eye once; these say what matters in it.
	byID := resourcesByID(got)
	exclusive := byID[gpu0][0]
	assert.Equal(t, "llama-train-0", resAttr(exclusive, accelschema.AttrK8sPodName))
	assert.Equal(t, "llama-train", resAttr(exclusive, accelschema.AttrK8sStatefulSetName))
	assert.Equal(t, "research", resAttr(exclusive, accelschema.AttrTeam))
	assert.Equal(t, "training", resAttr(exclusive, accelschema.AttrWorkloadType))
	assert.Equal(t, "p5.48xlarge", resAttr(exclusive, accelschema.AttrHostType))
	assert.Equal(t, "allocated", resAttr(exclusive, accelschema.AttrAllocationState))

	// The time-sliced GPU: its own resource stays, with every device-wide
	// reading and the half nobody holds; vllm and embed get a copy each
	// with their quarter and only their own processes.
	shared := byID[gpu1]
	require.Len(t, shared, 3, "the GPU's own resource, then embed's and vllm's copies")
	device, embed, vllm := shared[0], shared[1], shared[2]
	assert.Nil(t, resAttr(device, accelschema.AttrK8sPodName))
	assert.Nil(t, resAttr(device, accelschema.AttrHWParent), "the device's own resource")
	assert.Equal(t, "none", resAttr(device, accelschema.AttrPartitionType), "its identity as received")
	assert.Equal(t, "unallocated", resAttr(device, accelschema.AttrAllocationState))
	assert.Equal(t, 0.5, resAttr(device, accelschema.AttrPartitionShare), "what the consumers leave")
	assert.Equal(t, "p5.48xlarge", resAttr(device, accelschema.AttrHostType))
	assert.Equal(t, []string{accelschema.MetricGPUUtilization, accelschema.MetricPower, accelschema.MetricProcessMemoryUsage, accelschema.MetricProcessUtilization,
		accelschema.MetricAllocationShare}, metricNames(device), "its readings, and the half nobody holds as a holding")
	assert.Equal(t, []int64{1}, pids(device), "a host process stays on the device")
	assert.Equal(t, "vllm-6d4f9-abcde", resAttr(vllm, accelschema.AttrK8sPodName))
	assert.Equal(t, "vllm", resAttr(vllm, accelschema.AttrK8sDeploymentName))
	assert.Equal(t, "inference", resAttr(vllm, accelschema.AttrWorkloadType), "the pod serves gen_ai metrics")
	assert.Equal(t, 0.25, resAttr(vllm, accelschema.AttrPartitionShare))
	assert.Equal(t, "time_slicing", resAttr(vllm, accelschema.AttrPartitionType))
	assert.Equal(t, gpu1+"::0", resAttr(vllm, accelschema.AttrPartitionID))
	assert.Equal(t, gpu1, resAttr(vllm, accelschema.AttrHWParent), "a copy's parent is its GPU")
	assert.Equal(t, []string{accelschema.MetricProcessMemoryUsage, accelschema.MetricProcessUtilization, accelschema.MetricAllocationShare}, metricNames(vllm),
		"only what was measured for the pod, and its holding")
	assert.Equal(t, []int64{4242}, pids(vllm), "each pod gets its own processes")
	assert.Equal(t, []int64{4343}, pids(embed))

	assert.Equal(t, "unallocated", resAttr(byID[gpu2][0], accelschema.AttrAllocationState))
	assert.Equal(t, "allocated", resAttr(byID[gpu3][0], accelschema.AttrAllocationState), "MIG-enabled GPU with a held instance")
	assert.Nil(t, resAttr(byID[gpu3][0], accelschema.AttrK8sPodName))
	assert.Equal(t, "notebook-0", resAttr(byID[migA][0], accelschema.AttrK8sPodName))
	assert.Equal(t, "interactive", resAttr(byID[migA][0], accelschema.AttrWorkloadType))
	assert.Equal(t, 0.5, resAttr(byID[migA][0], accelschema.AttrPartitionShare))
	assert.Equal(t, "unallocated", resAttr(byID[migB][0], accelschema.AttrAllocationState))

	// The DRA claim shared by etl-a and etl-b holds all of gpu4: the GPU's
	// own resource keeps its readings at share 0.
	dra := byID[gpu4]
	require.Len(t, dra, 3)
	assert.Equal(t, 0.0, resAttr(dra[0], accelschema.AttrPartitionShare))
	assert.Equal(t, "allocated", resAttr(dra[0], accelschema.AttrAllocationState))
	assert.Nil(t, resAttr(dra[0], accelschema.AttrDRAClaimName))
	for _, c := range dra[1:] {
		assert.Equal(t, "dra", resAttr(c, accelschema.AttrPartitionType))
		assert.Equal(t, 0.5, resAttr(c, accelschema.AttrPartitionShare))
		assert.Equal(t, "etl-shared-gpu", resAttr(c, accelschema.AttrDRAClaimName))
		assert.Equal(t, "etl", resAttr(c, accelschema.AttrK8sCronJobName))
		assert.Equal(t, gpu4, resAttr(c, accelschema.AttrHWParent))
		assert.Equal(t, []string{accelschema.MetricAllocationShare}, metricNames(c), "no process of theirs was measured: only their holding")
	}

	inference := byID[""][0]
	assert.Equal(t, "search", resAttr(inference, accelschema.AttrTeam))
	assert.Equal(t, "vllm", resAttr(inference, accelschema.AttrWorkloadName))
	assert.Equal(t, "vllm", resAttr(inference, accelschema.K8sPodLabelPrefix+"app"))

	// Shares of every physical device add up to at most 1.
	sums := map[string]float64{}
	rms := got.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		a := rms.At(i).Resource().Attributes()
		phys := strAttr(a, accelschema.AttrHWParent)
		if phys == "" {
			phys = strAttr(a, accelschema.AttrHWID)
		}
		if v, ok := a.Get(accelschema.AttrPartitionShare); ok && phys != gpu3 {
			sums[phys] += v.Double()
		}
	}
	for id, s := range sums {
		assert.LessOrEqual(t, s, 1.0+1e-9, id)
	}
	assert.Empty(t, countcheck.Violations(got))
	assert.Equal(t, "ok", statusName(h.host))
}

// compareGolden compares with testdata/expected/<name>; -update rewrites it.
func compareGolden(t *testing.T, name string, got pmetric.Metrics) {
	t.Helper()
	path := filepath.Join("testdata", "expected", name)
	if *update {
		c := pmetric.NewMetrics()
		got.CopyTo(c) // the writer sorts what it writes
		require.NoError(t, golden.WriteMetrics(t, path, c))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err)
	require.NoError(t, pmetrictest.CompareMetrics(want, got,
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder(),
		pmetrictest.IgnoreTimestamp())) // the writer normalises timestamps
}

// pids are the process.pid of the resource's per-process memory points.
func pids(rm pmetric.ResourceMetrics) []int64 {
	var out []int64
	forEachMetric(rm, func(m pmetric.Metric) {
		if m.Name() != accelschema.MetricProcessMemoryUsage {
			return
		}
		dps := m.Gauge().DataPoints()
		for j := 0; j < dps.Len(); j++ {
			v, _ := dps.At(j).Attributes().Get(accelschema.AttrProcessPID)
			out = append(out, v.Int())
		}
	})
	return out
}

// metricNames lists the resource's metrics, in order.
func metricNames(rm pmetric.ResourceMetrics) []string {
	var out []string
	forEachMetric(rm, func(m pmetric.Metric) { out = append(out, m.Name()) })
	return out
}

func forEachMetric(rm pmetric.ResourceMetrics, fn func(pmetric.Metric)) {
	for i := 0; i < rm.ScopeMetrics().Len(); i++ {
		ms := rm.ScopeMetrics().At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			fn(ms.At(j))
		}
	}
}

func underscore(uid string) string {
	b := []byte(uid)
	for i := range b {
		if b[i] == '-' {
			b[i] = '_'
		}
	}
	return string(b)
}

func statusName(h *statusHost) string {
	e := h.last()
	if e == nil {
		return "ok" // nothing reported: never degraded
	}
	if e.Err() != nil {
		return e.Err().Error()
	}
	return map[bool]string{true: "ok", false: e.Status().String()}[e.Status().String() == "StatusOK"]
}
