package acceleratorattributesprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
)

// sharedResource is the resource name the GPU Operator gives time-sliced
// replicas when renameByDefault is on.
const sharedResource = "nvidia.com/gpu.shared"

// holdingsNode: a GPU time-sliced into two replicas held by two pods, a
// whole GPU, a MIG-enabled GPU with one held and one free instance, and a
// GPU nobody holds.
func holdingsNode() []runtime.Object {
	return []runtime.Object{
		ownedPod("serve", "chat-a", vllmUID, "", "", map[string]string{"team": "search"}),
		ownedPod("serve", "chat-b", embedUID, "", "", map[string]string{"team": "search"}),
		ownedPod("ml", "train-0", "uid-train", "", "", map[string]string{"team": "research"}),
		ownedPod("ml", "notebook-0", "uid-nb", "", "", map[string]string{"team": "research"}),
	}
}

func holdingsKubelet(s *prt.Server) {
	s.SetPods(
		prt.Pod("serve", "chat-a", prt.Container("vllm", prt.Devices(sharedResource, gpu0+"::0"))),
		prt.Pod("serve", "chat-b", prt.Container("vllm", prt.Devices(sharedResource, gpu0+"::1"))),
		prt.Pod("ml", "train-0", prt.Container("trainer", prt.Devices("nvidia.com/gpu", gpu1))),
		prt.Pod("ml", "notebook-0", prt.Container("jupyter", prt.Devices("nvidia.com/mig-3g.40gb", migA))))
	s.SetAllocatable(prt.Devices(sharedResource, gpu0+"::0", gpu0+"::1"), prt.Devices("nvidia.com/gpu", gpu1, gpu2),
		prt.Devices("nvidia.com/mig-3g.40gb", migA, migB))
}

// holdingsBatch is one scrape of the node. The time-sliced GPU carries only
// device-wide readings: nothing was measured per pod or per process, so
// nothing but the allocation series can put its holders' copies on the wire.
func holdingsBatch() pmetric.Metrics {
	md := pmetric.NewMetrics()
	addDeviceReadings(md, gpuAttrs(gpu0, 0))
	addDevice(md, gpuAttrs(gpu1, 1))
	addDevice(md, gpuAttrs(gpu2, 2))
	addDeviceReadings(md, gpuAttrs(gpu3, 3))
	addDevice(md, migAttrs(migA, gpu3, 3, 1, "3g.40gb", 0.5))
	addDevice(md, migAttrs(migB, gpu3, 3, 2, "3g.40gb", 0.5))
	return md
}

// allocation is the value of a resource's allocation series; false when it
// has none. It fails the test if the series is there more than once.
func allocation(t *testing.T, rm pmetric.ResourceMetrics) (float64, bool) {
	t.Helper()
	var got []float64
	forEachMetric(rm, func(m pmetric.Metric) {
		if m.Name() != accelschema.MetricAllocationShare {
			return
		}
		require.Equal(t, pmetric.MetricTypeGauge, m.Type())
		require.Equal(t, "1", m.Unit())
		for i := 0; i < m.Gauge().DataPoints().Len(); i++ {
			dp := m.Gauge().DataPoints().At(i)
			assert.Zero(t, dp.Attributes().Len(), "the holder is in the resource, not in the point")
			assert.NotZero(t, dp.Timestamp())
			got = append(got, dp.DoubleValue())
		}
	})
	require.LessOrEqual(t, len(got), 1, "one allocation point per resource")
	if len(got) == 0 {
		return 0, false
	}
	return got[0], true
}

func TestEveryHoldingCarriesTheAllocationSeries(t *testing.T) {
	h := newHarness(t, holdingsNode()...)
	holdingsKubelet(h.kubelet)
	h.start()
	got := h.process(holdingsBatch())
	byID := resourcesByID(got)

	t.Run("time-sliced: a copy per holder, share 0.5 each, with nothing measured for them", func(t *testing.T) {
		shared := byID[gpu0]
		require.Len(t, shared, 3, "the device's own resource and one copy per holder")
		device := shared[0]
		assert.Equal(t, accelschema.AllocationAllocated, resAttr(device, accelschema.AttrAllocationState))
		assert.Equal(t, 0.0, resAttr(device, accelschema.AttrPartitionShare))
		_, has := allocation(t, device)
		assert.False(t, has, "the holders hold it all: the device's own resource names no holding")
		assert.Equal(t, []string{accelschema.MetricPower}, metricNames(device), "its readings stay on the device")

		pods := map[string]float64{}
		for _, c := range shared[1:] {
			v, ok := allocation(t, c)
			require.True(t, ok, "copy of %v has no allocation series", resAttr(c, accelschema.AttrK8sPodName))
			assert.Equal(t, resAttr(c, accelschema.AttrPartitionShare), v, "the series is the copy's share")
			assert.Equal(t, []string{accelschema.MetricAllocationShare}, metricNames(c), "no device reading on a copy")
			assert.Equal(t, gpu0, resAttr(c, accelschema.AttrHWParent))
			assert.Equal(t, accelschema.PartitionTimeSlicing, resAttr(c, accelschema.AttrPartitionType))
			assert.Equal(t, "search", resAttr(c, accelschema.AttrTeam))
			pods[resAttr(c, accelschema.AttrK8sPodName).(string)] = v
		}
		assert.Equal(t, map[string]float64{"chat-a": 0.5, "chat-b": 0.5}, pods)
	})

	t.Run("whole GPU: held in place", func(t *testing.T) {
		whole := byID[gpu1]
		require.Len(t, whole, 1)
		v, ok := allocation(t, whole[0])
		require.True(t, ok)
		assert.Equal(t, 1.0, v)
		assert.Equal(t, "train-0", resAttr(whole[0], accelschema.AttrK8sPodName))
	})

	t.Run("unallocated GPU: a holding of nobody", func(t *testing.T) {
		free := byID[gpu2]
		require.Len(t, free, 1)
		v, ok := allocation(t, free[0])
		require.True(t, ok)
		assert.Equal(t, 1.0, v)
		assert.Equal(t, accelschema.AllocationUnallocated, resAttr(free[0], accelschema.AttrAllocationState))
		assert.Nil(t, resAttr(free[0], accelschema.AttrK8sPodName))
	})

	t.Run("MIG: each instance, not the GPU", func(t *testing.T) {
		parent := byID[gpu3]
		require.Len(t, parent, 1)
		_, has := allocation(t, parent[0])
		assert.False(t, has, "a MIG-enabled GPU's holdings are its instances")

		held := byID[migA]
		require.Len(t, held, 1)
		v, ok := allocation(t, held[0])
		require.True(t, ok)
		assert.Equal(t, 0.5, v)
		assert.Equal(t, "notebook-0", resAttr(held[0], accelschema.AttrK8sPodName))

		free := byID[migB]
		require.Len(t, free, 1)
		v, ok = allocation(t, free[0])
		require.True(t, ok)
		assert.Equal(t, 0.5, v)
		assert.Equal(t, accelschema.AllocationUnallocated, resAttr(free[0], accelschema.AttrAllocationState))
	})

	// sum by (k8s.pod.name), as a backend would compute it.
	byPod := map[string]float64{}
	rms := got.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		if v, ok := allocation(t, rms.At(i)); ok {
			pod, _ := resAttr(rms.At(i), accelschema.AttrK8sPodName).(string)
			byPod[pod] += v
		}
	}
	assert.Equal(t, map[string]float64{"chat-a": 0.5, "chat-b": 0.5, "train-0": 1, "notebook-0": 0.5, "": 1.5}, byPod)
	assert.Empty(t, countcheck.Violations(got))
}

// A copy with points measured for its pod gets the series beside them, and
// the series is stamped with the scrape's time.
func TestAllocationSeriesBesideMeasuredPoints(t *testing.T) {
	h := newHarness(t, holdingsNode()...)
	holdingsKubelet(h.kubelet)
	h.start()
	md := pmetric.NewMetrics()
	rm := addDeviceReadings(md, gpuAttrs(gpu0, 0))
	addPerPod(rm, accelschema.MetricGPUUtilization, "serve/chat-a", 0.4)
	got := h.process(md)

	shared := resourcesByID(got)[gpu0]
	require.Len(t, shared, 3)
	a := shared[1]
	require.Equal(t, "chat-a", resAttr(a, accelschema.AttrK8sPodName))
	assert.ElementsMatch(t, []string{accelschema.MetricGPUUtilization, accelschema.MetricAllocationShare}, metricNames(a))
	power := shared[0].ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints().At(0).Timestamp()
	forEachMetric(a, func(m pmetric.Metric) {
		if m.Name() == accelschema.MetricAllocationShare {
			assert.Equal(t, power, m.Gauge().DataPoints().At(0).Timestamp(), "the scrape's time")
		}
	})
	assert.Empty(t, countcheck.Violations(got))
}

// A resource that already carries the series (an agent's output passing a
// second accelerator_attributes) keeps one point, the current share.
func TestAllocationSeriesIsReplacedNotRepeated(t *testing.T) {
	h := newHarness(t, holdingsNode()...)
	holdingsKubelet(h.kubelet)
	h.start()
	md := pmetric.NewMetrics()
	rm := addDevice(md, gpuAttrs(gpu1, 1))
	h.p.putAllocation(rm, holding{share: 0.25, holder: true}, batchTime(rm))
	got := h.process(md)
	whole := resourcesByID(got)[gpu1]
	require.Len(t, whole, 1)
	v, ok := allocation(t, whole[0])
	require.True(t, ok)
	assert.Equal(t, 1.0, v)
}
