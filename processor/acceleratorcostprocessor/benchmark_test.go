package acceleratorcostprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/metadata"
)

// fleetBatch is one scrape of a fleet as the agents send it: nodes × 8 GPUs
// with the dcgm receiver's device metrics (about 30 points each), a quarter
// of them MIG-partitioned, and one serving pod per node.
func fleetBatch(nodes int) pmetric.Metrics {
	var rs []resource
	gib := float64(1 << 30)
	for n := 0; n < nodes; n++ {
		node := fmt.Sprintf("node-%d", n)
		for g := 0; g < 8; g++ {
			id := fmt.Sprintf("GPU-%d-%d", n, g)
			metrics := []any{
				s.MetricGPUUtilization, 0.4, s.MetricGPUMemoryUsage, 30 * gib, s.MetricGPUMemoryLimit, 80 * gib,
				s.MetricGPUMemoryUtilization, 0.37, s.MetricPower, 350.0, s.MetricEnergy, 1e9, s.MetricGREngineActive, 0.45,
				s.MetricSMActive, 0.4, s.MetricSMOccupancy, 0.3, s.MetricTensorActive, 0.2, s.MetricDRAMActive, 0.3,
				s.MetricStatus, s.HWStateOK, s.MetricErrors, []float64{0, 0, 0}, s.MetricGPUIO, []float64{1e9, 2e9, 3e9, 4e9},
				s.MetricClockFrequency, []float64{1.4e9, 2.6e9}, s.MetricThrottleActive, []float64{0, 0}, s.MetricTemperature, []float64{60, 70},
			}
			attrs := []any{s.AttrK8sNodeName, node, s.AttrHostName, node, s.AttrHWVendor, s.VendorNVIDIA, s.AttrHWType, s.HWTypeGPU,
				s.AttrDeviceIndex, g, s.AttrCloudZone, "us-east-1a"}
			workload := fmt.Sprintf("job-%d-%d", n, g)
			typ := []string{s.WorkloadTraining, s.WorkloadInference, s.WorkloadBatch}[g%3]
			if g < 2 {
				for gi, prof := range []string{"3g.40gb", "2g.20gb", "1g.10gb"} {
					rs = append(rs, migInstance(id, fmt.Sprint(gi+1), prof, [...]float64{0.5, 2.0 / 7, 1.0 / 7}[gi],
						append(append(held(fmt.Sprintf("%s-%d", workload, gi), typ), attrs...), metrics...)...))
				}
				continue
			}
			rs = append(rs, gpu(id, append(append(held(workload, typ), attrs...), metrics...)...))
		}
		rs = append(rs, res(s.AttrK8sPodUID, fmt.Sprintf("uid-job-%d-1", n), s.AttrK8sNodeName, node,
			s.MetricKVCacheUtilization, 0.4, s.MetricRequestsWaiting, 1.0, s.MetricRequestsRunning, 8.0))
	}
	return batch(t0, rs...)
}

func setTimestamps(md pmetric.Metrics, t pcommon.Timestamp) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				if m.Type() == pmetric.MetricTypeGauge {
					dps = m.Gauge().DataPoints()
				} else {
					dps = m.Sum().DataPoints()
				}
				for d := 0; d < dps.Len(); d++ {
					dps.At(d).SetTimestamp(t)
				}
			}
		}
	}
}

// BenchmarkProcessMetrics measures the processor in a metrics pipeline
// (processorhelper included) on a 64-node, 512-GPU batch; points/s counts
// the data points that came in.
func BenchmarkProcessMetrics(b *testing.B) {
	for _, nodes := range []int{1, 64} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			cfg := createDefaultConfig().(*Config)
			set := processortest.NewNopSettings(metadata.Type)
			set.ID = component.NewIDWithName(metadata.Type, fmt.Sprintf("bench%d", nodes))
			p, err := NewFactory().CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() {
				if err := p.Shutdown(context.Background()); err != nil {
					b.Error(err)
				}
			})
			template := fleetBatch(nodes)
			points := template.DataPointCount()
			var md pmetric.Metrics
			b.ReportAllocs()
			b.ResetTimer()
			var busy time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				md = pmetric.NewMetrics()
				template.CopyTo(md)
				setTimestamps(md, t0+pcommon.Timestamp(time.Duration(i)*10*time.Second))
				b.StartTimer()
				start := time.Now()
				if err := p.ConsumeMetrics(context.Background(), md); err != nil {
					b.Fatal(err)
				}
				busy += time.Since(start)
			}
			b.ReportMetric(float64(points)*float64(b.N)/busy.Seconds(), "points/s")
			b.ReportMetric(float64(points), "points/batch")
		})
	}
}
