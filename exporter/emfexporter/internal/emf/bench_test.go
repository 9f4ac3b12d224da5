package emf

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// gatewayBatch is what a gateway receives from a 16-node fleet in one batch:
// 8 GPUs per node, 30 device metrics each, a latency histogram and
// per-reason waste on every GPU.
func gatewayBatch() pmetric.Metrics {
	md := pmetric.NewMetrics()
	for node := 0; node < 16; node++ {
		for gpu := 0; gpu < 8; gpu++ {
			rm := md.ResourceMetrics().AppendEmpty()
			gpuResource(rm, fmt.Sprintf("ip-10-0-%d-17", node), fmt.Sprintf("GPU-%04d-%d", node, gpu), true)
			sm := rm.ScopeMetrics().AppendEmpty()
			for i := 0; i < 30; i++ {
				gauge(sm, fmt.Sprintf("accelerator.bench.metric_%02d", i), as.UnitRatio, float64(i)*0.37+float64(gpu), testTime)
			}
			h := sm.Metrics().AppendEmpty()
			h.SetName(as.MetricTimeToFirstToken)
			h.SetUnit(as.UnitSeconds)
			hh := h.SetEmptyHistogram()
			hh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
			dp := hh.DataPoints().AppendEmpty()
			dp.SetTimestamp(ts(testTime))
			dp.ExplicitBounds().FromRaw([]float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56})
			dp.BucketCounts().FromRaw([]uint64{1, 4, 9, 20, 11, 5, 2, 1, 0, 1})
			dp.SetCount(54)
			dp.SetSum(7.9)
			w := deltaSum(sm, as.MetricWaste, as.UnitUSD)
			for _, reason := range []string{"idle", "overprovisioned_memory", "fragmentation"} {
				p := w.AppendEmpty()
				p.SetTimestamp(ts(testTime))
				p.SetDoubleValue(0.0123)
				p.Attributes().PutStr(as.AttrWasteReason, reason)
			}
		}
	}
	return md
}

// BenchmarkEncode measures EMF encoding in data points per second on one
// core (run with -cpu 1): the gateway budget is 100k points/s per core.
func BenchmarkEncode(b *testing.B) {
	md := gatewayBatch()
	enc := NewEncoder(projectOptions())
	points := md.DataPointCount()
	now := time.Now()
	bytes := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			enc.EncodeResource(md.ResourceMetrics().At(i), now, func(_ int64, msg []byte) { bytes += len(msg) }, nil)
		}
	}
	b.ReportMetric(float64(points)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
	b.ReportMetric(float64(bytes)/float64(b.N)/float64(points), "bytes/point")
}
