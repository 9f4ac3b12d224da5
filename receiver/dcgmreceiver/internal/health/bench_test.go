package health

import (
	"fmt"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// What the emitter asks of the tracker for every GPU of a scrape (its
// hw.status and XID counts), on a 512-GPU node with one MIG instance on
// every fourth GPU and a few XIDs seen: per scrape, not per GPU, so that a
// cost growing with the square of the devices shows.
func BenchmarkStateAndXIDCounts512(b *testing.B) {
	tr := New(10*time.Minute, time.Hour)
	var samples []model.Sample
	var gpus []model.Identity
	for i := range 512 {
		g := gpu(fmt.Sprintf("GPU-%03d", i))
		gpus = append(gpus, g)
		samples = append(samples, healthy(g))
		if i%4 == 0 {
			samples = append(samples, model.Sample{Identity: model.Identity{HWID: g.HWID + "/gi1", Parent: g.HWID,
				PartitionType: accelschema.PartitionMIG, GPUInstanceID: 1, ComputeInstanceID: -1}})
		}
	}
	tr.Observe(snap(t0, samples...))
	for i := 0; i < 512; i += 64 {
		tr.ObserveEvent(model.Event{Device: gpus[i], Time: t0, Kind: model.EventXID, Code: 13})
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, g := range gpus {
			_ = tr.State(g, t0)
			_ = tr.XIDCounts(g.HWID)
		}
	}
	b.ReportMetric(float64(len(gpus)*b.N)/b.Elapsed().Seconds(), "gpus/s")
}
