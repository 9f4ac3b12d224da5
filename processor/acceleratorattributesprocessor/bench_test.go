package acceleratorattributesprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/nvmlmig"
)

// benchNode is a node with 110 pods (the kubelet's default maximum) and 64
// GPUs: 46 held whole, 16 time-sliced four ways (64 pods), 2 held by nobody.
// Each pod of a shared GPU runs one process with per-process data.
func benchNode(b *testing.B, shared bool) (*harness, pmetric.Metrics) {
	var objects []runtime.Object
	var pods []*v1.PodResources
	h := newHarness(b)
	podN := 0
	addPod := func(device string, pid int) {
		name := fmt.Sprintf("worker-%03d", podN)
		uid := fmt.Sprintf("00000000-0000-4000-8000-%012d", podN)
		podN++
		objects = append(objects, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ml", Name: name, UID: types.UID(uid),
			Labels:          map[string]string{"team": fmt.Sprintf("team-%d", podN%7), "app": "train", "pod-template-hash": "5f7d9"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "worker-5f7d9", Controller: yes()}},
		}, Spec: corev1.PodSpec{NodeName: nodeName}})
		pods = append(pods, prt.Pod("ml", name, prt.Container("main", prt.Devices("nvidia.com/gpu", device))))
		if pid > 0 {
			h.writeCgroup(pid, "0::/kubepods/pod"+uid+"/"+cid+"\n")
		}
	}
	md := pmetric.NewMetrics()
	for g := 0; g < 64; g++ {
		uuid := fmt.Sprintf("GPU-00000000-0000-0000-0000-%012d", g)
		var pids []int
		switch {
		case g < 46 || !shared && g < 62:
			addPod(uuid, 0)
		case g < 62:
			for r := 0; r < 4; r++ {
				pid := 10000 + g*10 + r
				addPod(fmt.Sprintf("%s::%d", uuid, r), pid)
				pids = append(pids, pid)
			}
		}
		benchDevice(md, uuid, g, pids)
	}
	for podN < 110 {
		addPod("", 0) // pods without GPUs: the API and PodResources still list them
		pods[len(pods)-1].Containers[0].Devices = nil
	}
	h.client = fakeClientset(objects)
	h.kubelet.SetPods(pods...)
	core := zap.NewNop()
	tel := componenttest.NewNopTelemetrySettings()
	tel.Logger = core
	h.p = newAttributesProcessor(h.cfg, tel)
	h.p.registry = registryOf(h.client)
	h.p.openMIG = func() (nvmlmig.Resolver, func(), error) { return nil, nil, errNoNVML }
	if err := h.p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.p.Shutdown(context.Background()) })
	for !h.p.watcher().Synced() {
		time.Sleep(5 * time.Millisecond)
	}
	h.p.refresh(context.Background())
	if got := h.p.idx.Load().Stats.Pods; got != 110 {
		b.Fatalf("index has %d pods", got)
	}
	return h, md
}

// benchDevice is one GPU resource as the NVML source emits it: 29 data
// points of device metrics, plus two per process on shared GPUs.
func benchDevice(md pmetric.Metrics, uuid string, index int, pids []int) {
	rm := md.ResourceMetrics().AppendEmpty()
	putAttrs(rm.Resource().Attributes(), gpuAttrs(uuid, index))
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver")
	ts := pcommon.NewTimestampFromTime(time.Unix(1754300000, 0))
	gauge := func(name string, attrs ...[2]string) {
		m := sm.Metrics().AppendEmpty()
		m.SetName(name)
		dps := m.SetEmptyGauge().DataPoints()
		if len(attrs) == 0 {
			attrs = [][2]string{{}}
		}
		for _, a := range attrs {
			dp := dps.AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetDoubleValue(0.5)
			if a[0] != "" {
				dp.Attributes().PutStr(a[0], a[1])
			}
		}
	}
	for _, name := range []string{accelschema.MetricGPUUtilization, accelschema.MetricGPUMemoryUtilization, accelschema.MetricPower,
		accelschema.MetricSMActive, accelschema.MetricSMOccupancy, accelschema.MetricTensorActive, accelschema.MetricDRAMActive,
		accelschema.MetricGREngineActive, accelschema.MetricRowRemapPending, accelschema.MetricRowRemapFailed} {
		gauge(name)
	}
	gauge(accelschema.MetricTemperature, [2]string{accelschema.AttrHWSensorLocation, "gpu"}, [2]string{accelschema.AttrHWSensorLocation, "memory"})
	gauge(accelschema.MetricClockFrequency, [2]string{accelschema.AttrClockType, "sm"}, [2]string{accelschema.AttrClockType, "memory"})
	gauge(accelschema.MetricLinkThroughput, [2]string{accelschema.AttrHWDirection, "receive"}, [2]string{accelschema.AttrHWDirection, "transmit"},
		[2]string{accelschema.AttrLinkType, "nvlink"}, [2]string{accelschema.AttrLinkType, "pcie"})
	gauge(accelschema.MetricThrottleActive, [2]string{accelschema.AttrThrottleReason, "power"}, [2]string{accelschema.AttrThrottleReason, "thermal"},
		[2]string{accelschema.AttrThrottleReason, "sync_boost"}, [2]string{accelschema.AttrThrottleReason, "board_limit"},
		[2]string{accelschema.AttrThrottleReason, "low_utilization"}, [2]string{accelschema.AttrThrottleReason, "reliability"},
		[2]string{accelschema.AttrThrottleReason, "hw_slowdown"}, [2]string{accelschema.AttrThrottleReason, "sw_power_cap"})
	gauge(accelschema.MetricErrors, [2]string{accelschema.AttrErrorType, "ecc_corrected"}, [2]string{accelschema.AttrErrorType, "ecc_uncorrected"},
		[2]string{accelschema.AttrErrorType, "xid"}, [2]string{accelschema.AttrErrorType, "pcie_replay"}, [2]string{accelschema.AttrErrorType, "nvlink_crc"})
	if len(pids) == 0 {
		return
	}
	for _, name := range []string{accelschema.MetricProcessMemoryUsage, accelschema.MetricProcessUtilization} {
		m := sm.Metrics().AppendEmpty()
		m.SetName(name)
		dps := m.SetEmptyGauge().DataPoints()
		for _, pid := range pids {
			dp := dps.AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetIntValue(1 << 30)
			dp.Attributes().PutInt(accelschema.AttrProcessPID, int64(pid))
		}
	}
}

// BenchmarkProcessMetrics: go test -run '^$' -bench ProcessMetrics -benchmem ./processor/acceleratorattributesprocessor/
func BenchmarkProcessMetrics(b *testing.B) {
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "exclusive_64gpus_110pods", true: "16_timesliced_64gpus_110pods"}[shared]
		b.Run(name, func(b *testing.B) {
			h, src := benchNode(b, shared)
			points := src.DataPointCount()
			var batch pmetric.Metrics
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			var processing time.Duration
			for b.Loop() {
				b.StopTimer()
				batch = pmetric.NewMetrics()
				src.CopyTo(batch)
				b.StartTimer()
				start := time.Now()
				if _, err := h.p.processMetrics(ctx, batch); err != nil {
					b.Fatal(err)
				}
				processing += time.Since(start)
			}
			b.ReportMetric(float64(points*b.N)/processing.Seconds(), "points/s")
			b.ReportMetric(float64(points), "points/batch")
		})
	}
}

// BenchmarkIndexBuild is the cost of one refresh's rebuild on that node.
func BenchmarkIndexBuild(b *testing.B) {
	h, _ := benchNode(b, true)
	b.ReportAllocs()
	for b.Loop() {
		h.p.rebuild()
	}
}

// BenchmarkRefreshSettled is one periodic refresh on that node when
// nothing changed: the kubelet asked (List, GetAllocatableResources over
// its gRPC socket), the answers compared, the index kept.
func BenchmarkRefreshSettled(b *testing.B) {
	h, _ := benchNode(b, true)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h.p.refresh(ctx)
	}
}
