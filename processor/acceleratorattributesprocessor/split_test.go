package acceleratorattributesprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
)

// addPerPod adds one point of a per-pod measurement, as the dcgm receiver's
// dcgm_exporter source emits them with per_pod_usage on.
func addPerPod(rm pmetric.ResourceMetrics, name string, pod string, v float64) {
	sm := rm.ScopeMetrics().At(0)
	var m pmetric.Metric
	for i := 0; i < sm.Metrics().Len(); i++ {
		if sm.Metrics().At(i).Name() == name {
			m = sm.Metrics().At(i)
		}
	}
	if m == (pmetric.Metric{}) {
		m = sm.Metrics().AppendEmpty()
		m.SetName(name)
		m.SetEmptyGauge()
	}
	dp := m.Gauge().DataPoints().AppendEmpty()
	dp.SetDoubleValue(v)
	dp.Attributes().PutStr(accelschema.AttrConsumerPod, pod)
	if name == accelschema.MetricGPUUtilization {
		dp.Attributes().PutStr(accelschema.AttrHWGPUTask, accelschema.GPUTaskGeneral)
	}
}

// points lists "metric{attributes}=value" for each point of the resource.
func points(rm pmetric.ResourceMetrics) map[string]float64 {
	out := map[string]float64{}
	forEachMetric(rm, func(m pmetric.Metric) {
		dps, _ := numberPoints(m)
		for i := 0; i < dps.Len(); i++ {
			key := m.Name()
			if v, ok := dps.At(i).Attributes().Get(accelschema.AttrConsumerPod); ok {
				key += "{" + v.Str() + "}"
			}
			if _, ok := dps.At(i).Attributes().Get(accelschema.AttrProcessPID); ok {
				continue
			}
			out[key] = dps.At(i).DoubleValue()
		}
	})
	return out
}

func TestPerPodPointsGoToTheirPodsCopy(t *testing.T) {
	h := newHarness(t, ownedPod("a", "p1", vllmUID, "", "", nil), ownedPod("a", "p2", embedUID, "", "", nil))
	h.kubelet.SetPods(
		prt.Pod("a", "p1", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0+"::0"))),
		prt.Pod("a", "p2", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0+"::1"))))
	h.start()
	md := pmetric.NewMetrics()
	rm := addDeviceReadings(md, gpuAttrs(gpu0, 0)) // power; utilization and memory only per pod
	addPerPod(rm, accelschema.MetricGPUUtilization, "a/p1", 0.4)
	addPerPod(rm, accelschema.MetricGPUUtilization, "a/ghost", 0.2)
	addPerPod(rm, accelschema.MetricGPUMemoryUsage, "a/p2", 3<<30)
	got := h.process(md)

	out := resourcesByID(got)[gpu0]
	require.Len(t, out, 3)
	device, p1, p2 := out[0], out[1], out[2]
	assert.Equal(t, map[string]float64{
		accelschema.MetricPower:                        412.5,
		accelschema.MetricGPUUtilization + "{a/ghost}": 0.2, // a pod the sources do not know: kept, and still named
	}, points(device))
	assert.Equal(t, map[string]float64{accelschema.MetricGPUUtilization: 0.4, accelschema.MetricAllocationShare: 0.5}, points(p1),
		"the pod's own utilization, without the attribute its copy now says, beside its holding")
	assert.Equal(t, map[string]float64{accelschema.MetricGPUMemoryUsage: 3 << 30, accelschema.MetricAllocationShare: 0.5}, points(p2))
	assert.Equal(t, "p1", resAttr(p1, accelschema.AttrK8sPodName))
	assert.Empty(t, countcheck.Violations(got))
}

func TestPlaceholderHolderMarksTheDeviceReserved(t *testing.T) {
	const ns = "runai-reservation"
	reservation := func(name string) string { return "runai-reservation-gpu-" + nodeName + "-" + name }
	objects := []runtime.Object{
		ownedPod(ns, reservation("a"), "uid-ra", "", "", map[string]string{"team": "runai"}),
		ownedPod(ns, reservation("b"), "uid-rb", "", "", map[string]string{"team": "runai"}),
		ownedPod(ns, reservation("c"), "uid-rc", "", "", map[string]string{"team": "runai"}),
		ownedPod("ml", "train-0", "uid-train", "", "", map[string]string{"team": "research"}),
	}
	setPods := func(h *harness) {
		h.kubelet.SetPods(
			prt.Pod(ns, reservation("a"), prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0))),
			prt.Pod(ns, reservation("b"), prt.Container("c", prt.Devices("nvidia.com/gpu", gpu1+"::0"))),
			prt.Pod("ml", "train-0", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu1+"::1"))),
			prt.Pod(ns, reservation("c"), prt.Container("c", prt.Devices("nvidia.com/mig-3g.40gb", migA))))
	}
	batch := func() pmetric.Metrics {
		md := pmetric.NewMetrics()
		addDevice(md, gpuAttrs(gpu0, 0))
		addDevice(md, gpuAttrs(gpu1, 1))
		// A dcgm-exporter MIG series nothing can place, hinted with the placeholder.
		addDevice(md, append(migAttrs(gpu3+"/gi1", gpu3, 3, 1, "3g.40gb", 0.5),
			kv{accelschema.AttrK8sPodName, reservation("c")}, kv{accelschema.AttrK8sNamespaceName, ns}))
		return md
	}

	t.Run("default placeholder_namespaces", func(t *testing.T) {
		h := newHarness(t, objects...)
		setPods(h)
		h.start()
		got := h.process(batch())
		byID := resourcesByID(got)

		whole := byID[gpu0]
		require.Len(t, whole, 1)
		assert.Equal(t, "reserved", resAttr(whole[0], accelschema.AttrAllocationState))
		assert.Nil(t, resAttr(whole[0], accelschema.AttrK8sPodName), "not the placeholder's")
		assert.Nil(t, resAttr(whole[0], accelschema.AttrTeam))
		assert.Equal(t, 1.0, resAttr(whole[0], accelschema.AttrPartitionShare), "still paid for, whole")
		assert.Equal(t, nodeName, resAttr(whole[0], accelschema.AttrK8sNodeName))

		// Half time-sliced to a workload, half to the placeholder: the GPU's
		// own resource stands for the reserved half; only the workload has a copy.
		shared := byID[gpu1]
		require.Len(t, shared, 2)
		assert.Equal(t, "reserved", resAttr(shared[0], accelschema.AttrAllocationState))
		assert.Equal(t, 0.5, resAttr(shared[0], accelschema.AttrPartitionShare))
		assert.Equal(t, "train-0", resAttr(shared[1], accelschema.AttrK8sPodName))
		assert.Equal(t, 0.5, resAttr(shared[1], accelschema.AttrPartitionShare))

		hinted := byID[gpu3+"/gi1"][0]
		assert.Equal(t, "reserved", resAttr(hinted, accelschema.AttrAllocationState), "a hint naming a placeholder")
		assert.Nil(t, resAttr(hinted, accelschema.AttrK8sPodName))
		assert.Empty(t, countcheck.Violations(got))

		// A health event about the shared GPU says what its own resource says.
		ld := plog.NewLogs()
		putAttrs(ld.ResourceLogs().AppendEmpty().Resource().Attributes(), gpuAttrs(gpu1, 1))
		logs, err := h.p.processLogs(context.Background(), ld)
		require.NoError(t, err)
		assert.Equal(t, "reserved", strAttr(logs.ResourceLogs().At(0).Resource().Attributes(), accelschema.AttrAllocationState))
	})

	t.Run("no placeholder namespaces", func(t *testing.T) {
		h := newHarness(t, objects...)
		h.cfg.PlaceholderNamespaces = nil
		setPods(h)
		h.start()
		whole := resourcesByID(h.process(batch()))[gpu0][0]
		assert.Equal(t, "allocated", resAttr(whole, accelschema.AttrAllocationState))
		assert.Equal(t, reservation("a"), resAttr(whole, accelschema.AttrK8sPodName))
	})
}

// dcgm-exporter names the DRA claim on the devices it holds. When no
// ResourceSlice says which GPU the claim's result is, the claim's pods are
// still the device's consumers.
func TestClaimHintAttributesADeviceTheSlicesCannotResolve(t *testing.T) {
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "etl-shared-gpu"}, Status: resourcev1.ResourceClaimStatus{
		Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: "gpu.nvidia.com", Pool: nodeName, Device: "gpu-5"}}}},
		ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "etl-a", UID: "uid-etl-a"}, {Resource: "pods", Name: "etl-b", UID: "uid-etl-b"}}}}
	h := newHarness(t,
		ownedPod("batch", "etl-a", "uid-etl-a", "Job", "etl-29012345", map[string]string{"team": "data"}),
		ownedPod("batch", "etl-b", "uid-etl-b", "Job", "etl-29012345", map[string]string{"team": "data"}),
		claim) // and no ResourceSlice
	h.kubelet.SetPods(prt.Pod("batch", "etl-a", prt.Container("etl")), prt.Pod("batch", "etl-b", prt.Container("etl")))
	h.start()
	hint := func(hwID, claimName string) []kv {
		return append(gpuAttrs(hwID, 5), kv{accelschema.AttrDRAClaimNamespace, "batch"}, kv{accelschema.AttrDRAClaimName, claimName},
			kv{accelschema.AttrDRADriver, "gpu.nvidia.com"}, kv{accelschema.AttrDRAPool, nodeName}, kv{accelschema.AttrDRADevice, "gpu-5"})
	}
	md := pmetric.NewMetrics()
	addDevice(md, hint(gpu5, "etl-shared-gpu"))
	addDevice(md, hint(gpu2, "not-known"))
	got := h.process(md)
	byID := resourcesByID(got)

	shared := byID[gpu5]
	require.Len(t, shared, 3)
	assert.Equal(t, "allocated", resAttr(shared[0], accelschema.AttrAllocationState))
	assert.Equal(t, 0.0, resAttr(shared[0], accelschema.AttrPartitionShare))
	assert.Nil(t, resAttr(shared[0], accelschema.AttrDRAClaimName), "the device's own resource names no holder")
	for i, pod := range []string{"etl-a", "etl-b"} {
		c := shared[1+i]
		assert.Equal(t, pod, resAttr(c, accelschema.AttrK8sPodName))
		assert.Equal(t, "data", resAttr(c, accelschema.AttrTeam))
		assert.Equal(t, "dra", resAttr(c, accelschema.AttrPartitionType))
		assert.Equal(t, "gpu.nvidia.com/"+nodeName+"/gpu-5", resAttr(c, accelschema.AttrPartitionID))
		assert.Equal(t, 0.5, resAttr(c, accelschema.AttrPartitionShare))
		assert.Equal(t, "etl-shared-gpu", resAttr(c, accelschema.AttrDRAClaimName))
		assert.Equal(t, gpu5, resAttr(c, accelschema.AttrHWParent))
	}

	unknown := byID[gpu2]
	require.Len(t, unknown, 1)
	assert.Nil(t, resAttr(unknown[0], accelschema.AttrAllocationState), "a claim nobody here holds proves nothing")
	assert.Equal(t, "not-known", resAttr(unknown[0], accelschema.AttrDRAClaimName))
	assert.Empty(t, countcheck.Violations(got))
}
