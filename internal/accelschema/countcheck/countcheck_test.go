package countcheck

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

const gpu = "GPU-8f3c0000-0000-0000-0000-000000000001"

type res struct {
	attrs   map[string]any
	metrics map[string]float64 // name → value, one point each
}

func build(resources ...res) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for _, r := range resources {
		rm := md.ResourceMetrics().AppendEmpty()
		_ = rm.Resource().Attributes().FromRaw(r.attrs)
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		for name, v := range r.metrics {
			m := ms.AppendEmpty()
			m.SetName(name) // one point at a fixed time: all resources are one scrape
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(pcommon.Timestamp(1e9))
			dp.SetDoubleValue(v)
		}
	}
	return md
}

func device(metrics map[string]float64) res {
	return res{map[string]any{accelschema.AttrHWID: gpu, accelschema.AttrPartitionType: accelschema.PartitionNone}, metrics}
}

func copyOf(replica string, share float64, metrics map[string]float64) res {
	return res{map[string]any{
		accelschema.AttrHWID: gpu, accelschema.AttrHWParent: gpu,
		accelschema.AttrPartitionType: accelschema.PartitionTimeSlicing, accelschema.AttrPartitionID: gpu + "::" + replica,
		accelschema.AttrPartitionShare: share,
	}, metrics}
}

func TestCountedOnceHasNoViolations(t *testing.T) {
	md := build(
		device(map[string]float64{accelschema.MetricPower: 300, accelschema.MetricGPUUtilization: 0.5, accelschema.MetricPrice: 1}),
		copyOf("0", 0.5, map[string]float64{accelschema.MetricPrice: 1}),
		copyOf("1", 0.5, map[string]float64{accelschema.MetricPrice: 1}),
	)
	md.ResourceMetrics().At(0).Resource().Attributes().PutDouble(accelschema.AttrPartitionShare, 0)
	if v := Violations(md); len(v) != 0 {
		t.Fatalf("want no violations, got %v", v)
	}
}

func TestViolationsNameWhatIsCountedTwice(t *testing.T) {
	md := build(
		device(map[string]float64{accelschema.MetricGPUUtilization: 0.5}),
		copyOf("0", 0.6, map[string]float64{accelschema.MetricPower: 300, accelschema.MetricGPUUtilization: 0.5, accelschema.MetricPrice: 1}),
		copyOf("1", 0.6, map[string]float64{accelschema.MetricPrice: 1}),
		device(map[string]float64{accelschema.MetricEnergy: 1}),
		device(map[string]float64{accelschema.MetricEnergy: 1}),
	)
	got := strings.Join(Violations(md), "\n")
	for _, want := range []string{
		"device-scoped hw.power on " + gpu,           // power on a copy
		"hw.gpu.utilization is on device " + gpu,     // parent repeats the copy
		"device-scoped hw.energy exported 2 times",   // two device resources
		"shares of device " + gpu + " add up to 1.2", // paid twice
	} {
		if !strings.Contains(got, want) {
			t.Errorf("violations do not mention %q:\n%s", want, got)
		}
	}
}

func TestServerMetricOnDeviceIsAViolation(t *testing.T) {
	md := build(device(map[string]float64{accelschema.MetricRequestsRunning: 3}))
	if v := Violations(md); len(v) != 1 || !strings.Contains(v[0], "server-scoped") {
		t.Fatalf("want one server-scoped violation, got %v", v)
	}
}

// A device total beside its partitions' own series (with other attributes)
// counts the quantity twice, e.g. a Neuron device's memory use summed over
// categories next to its cores' per-runtime series.
func TestDeviceTotalBesideItsPartitionsIsAViolation(t *testing.T) {
	md := build(
		device(map[string]float64{accelschema.MetricGPUMemoryUsage: 100}),
		copyOf("0", 0.5, nil),
	)
	pt := md.ResourceMetrics().At(1).ScopeMetrics().At(0).Metrics().AppendEmpty()
	pt.SetName(accelschema.MetricGPUMemoryUsage)
	dp := pt.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.Attributes().PutInt(accelschema.AttrProcessPID, 42)
	dp.SetIntValue(60)
	got := strings.Join(Violations(md), "\n")
	if !strings.Contains(got, "hw.gpu.memory.usage is reported as a total on device") {
		t.Fatalf("want the total-beside-partition violation, got:\n%s", got)
	}
}

// gauge adds one point of name with the given attributes to a resource of md.
func gauge(md pmetric.Metrics, resource int, name string, v float64, attrs map[string]any) {
	m := md.ResourceMetrics().At(resource).ScopeMetrics().At(0).Metrics().AppendEmpty()
	m.SetName(name)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.Timestamp(1e9))
	dp.SetDoubleValue(v)
	_ = dp.Attributes().FromRaw(attrs)
}

// A time-sliced GPU under dcgm-exporter's KUBERNETES_VIRTUAL_GPUS: its video
// encoder and decoder utilization are the device's (on its own resource),
// each pod's own utilization of the compute engine is on the pod's copy.
// They are other engines: nothing is counted twice. A compute (general)
// total beside the pods' own readings is, and so is the encoder's on the
// device and again on a copy.
func TestEncoderUtilizationOnTheDeviceBesideThePodsOwn(t *testing.T) {
	shared := func() pmetric.Metrics {
		md := build(device(nil), copyOf("0", 0.25, nil), copyOf("1", 0.25, nil))
		gauge(md, 0, accelschema.MetricGPUUtilization, 0.1, map[string]any{accelschema.AttrHWGPUTask: accelschema.GPUTaskEncoder})
		gauge(md, 0, accelschema.MetricGPUUtilization, 0, map[string]any{accelschema.AttrHWGPUTask: accelschema.GPUTaskDecoder})
		gauge(md, 1, accelschema.MetricGPUUtilization, 0.7, map[string]any{accelschema.AttrHWGPUTask: accelschema.GPUTaskGeneral, accelschema.AttrConsumerPod: "ns/p"})
		gauge(md, 2, accelschema.MetricGPUUtilization, 0.2, map[string]any{accelschema.AttrHWGPUTask: accelschema.GPUTaskGeneral, accelschema.AttrConsumerPod: "ns/q"})
		return md
	}
	if v := Violations(shared()); len(v) != 0 {
		t.Fatalf("the device's encoder/decoder beside its pods' own utilization: %v", v)
	}

	total := shared()
	gauge(total, 0, accelschema.MetricGPUUtilization, 0.9, map[string]any{accelschema.AttrHWGPUTask: accelschema.GPUTaskGeneral})
	if got := strings.Join(Violations(total), "\n"); !strings.Contains(got, "hw.gpu.utilization{hw.gpu.task=general} is reported as a total on device") {
		t.Errorf("a compute total beside the pods' own: want the total-beside-copy violation, got:\n%s", got)
	}
	untagged := shared()
	gauge(untagged, 0, accelschema.MetricGPUUtilization, 0.9, nil)
	if got := strings.Join(Violations(untagged), "\n"); !strings.Contains(got, "hw.gpu.utilization{hw.gpu.task=general} is reported as a total on device") {
		t.Errorf("a total without hw.gpu.task is the compute engine's: want the total-beside-copy violation, got:\n%s", got)
	}
	onCopy := shared()
	gauge(onCopy, 1, accelschema.MetricGPUUtilization, 0.1, map[string]any{accelschema.AttrHWGPUTask: accelschema.GPUTaskEncoder, accelschema.AttrConsumerPod: "ns/p"})
	if got := strings.Join(Violations(onCopy), "\n"); !strings.Contains(got, "hw.gpu.utilization{hw.gpu.task=encoder} is reported as a total on device") {
		t.Errorf("the encoder on the device and again on a copy: want the total-beside-copy violation, got:\n%s", got)
	}
}

// The allocation series is one per holding: a time-sliced GPU's two copies at
// 0.5 each are the whole device; the device's own resource beside them at 1
// (a MIG-enabled GPU's or a Neuron device's own series beside its
// partitions') holds it twice.
func TestAllocationSeriesAddUpToOneDevice(t *testing.T) {
	share := accelschema.MetricAllocationShare
	held := build(device(nil), copyOf("0", 0.5, map[string]float64{share: 0.5}), copyOf("1", 0.5, map[string]float64{share: 0.5}))
	if v := Violations(held); len(v) != 0 {
		t.Fatalf("two holders at 0.5: %v", v)
	}
	twice := build(device(map[string]float64{share: 1}), copyOf("0", 0.5, map[string]float64{share: 0.5}), copyOf("1", 0.5, map[string]float64{share: 0.5}))
	if got := strings.Join(Violations(twice), "\n"); !strings.Contains(got, "allocation series of device "+gpu+" add up to 2.000000") {
		t.Errorf("the device at 1 beside its holders: want the allocation violation, got:\n%s", got)
	}
	noDevice := build(res{map[string]any{accelschema.AttrK8sPodName: "p"}, map[string]float64{share: 1}})
	if got := strings.Join(Violations(noDevice), "\n"); !strings.Contains(got, "holding-scoped "+share+" on a resource without hw.id") {
		t.Errorf("on a resource without hw.id: want the holding-scoped violation, got:\n%s", got)
	}
}
