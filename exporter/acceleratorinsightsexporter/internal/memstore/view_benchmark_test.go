package memstore

import (
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
)

// The parts of one view rebuild at 10,000 devices (1,250 nodes × 8 GPUs):
// the store's snapshot, the grouping (fleet.NewView) and the answers the
// pages ask for first, each alone, with their allocations (-benchmem).
func BenchmarkRebuild10k(b *testing.B) {
	st := New(benchConfig())
	at := fixture.Now
	st.SetClock(func() time.Time { return at })
	for i := 2; i >= 0; i-- {
		at = fixture.Now.Add(-time.Duration(i) * 30 * time.Second)
		st.Consume(fixture.Large(1250, at))
	}
	snap := st.Snapshot()
	v := fleet.NewView(snap, nil, 0.05)
	b.Run("snapshot", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = st.Snapshot()
		}
	})
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = fleet.NewView(snap, nil, 0.05)
		}
	})
	var all fleet.Filter
	for name, fn := range map[string]func(){
		"fleet":    func() { _ = v.Fleet(all) },
		"teams":    func() { _ = v.Teams(all) },
		"capacity": func() { _ = v.Capacity(all) },
		"filters":  func() { _ = v.Filters() },
		"devices":  func() { _ = v.Devices(all, 1, 50) },
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				fn()
			}
		})
	}
}
