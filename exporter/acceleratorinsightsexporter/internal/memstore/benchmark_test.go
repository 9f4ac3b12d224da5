package memstore

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
)

func benchConfig() Config {
	return Config{Retention: time.Hour, PointsPerSeries: 120, Expiry: 10 * time.Minute, RateWindow: 5 * time.Minute}
}

// Ingest rate in the steady state: batches of 1,000 nodes × 8 GPUs (18
// points each), 30 s apart, so every chart appends a point, into a model
// that already holds the devices (the first batch, which allocates their
// rings, is fed before the clock runs). Run with -cpu 1 for one core.
func BenchmarkIngest(b *testing.B) {
	const nodes, batches = 1000, 8
	start := fixture.Now
	mds := make([]pmetric.Metrics, batches)
	for i := range mds {
		mds[i] = fixture.Large(nodes, start.Add(time.Duration(i)*30*time.Second))
	}
	points := nodes * 8 * fixture.PointsPerDevice
	var st *Store
	var at time.Time
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := 1 + i%(batches-1)
		if k == 1 {
			b.StopTimer()
			st = New(benchConfig())
			st.SetClock(func() time.Time { return at })
			at = start
			st.Consume(mds[0])
			b.StartTimer()
		}
		at = start.Add(time.Duration(k) * 30 * time.Second)
		st.Consume(mds[k])
	}
	b.ReportMetric(float64(points*b.N)/b.Elapsed().Seconds(), "points/s")
}

// Memory held per device once every chart's ring is full: 1,000 GPUs fed
// points_per_series + 1 batches, heap measured after a GC, before and after.
func BenchmarkBytesPerDevice(b *testing.B) {
	for _, pps := range []int{120, 360} {
		b.Run(fmt.Sprintf("points_per_series=%d", pps), func(b *testing.B) {
			const nodes = 125
			cfg := benchConfig()
			cfg.PointsPerSeries = pps
			step := cfg.Retention / time.Duration(pps)
			for i := 0; i < b.N; i++ {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				st := New(cfg)
				var at time.Time
				st.SetClock(func() time.Time { return at })
				for k := 0; k <= pps; k++ {
					at = fixture.Now.Add(time.Duration(k) * step)
					st.Consume(fixture.Large(nodes, at))
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(st.Len()), "bytes/device")
				runtime.KeepAlive(st)
			}
		})
	}
}
