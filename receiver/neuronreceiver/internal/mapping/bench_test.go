package mapping

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/report"
)

// BenchmarkTrn2Report maps one trn2.48xlarge report (16 devices, 64
// NeuronCores, two runtimes) per iteration, as the receiver does every
// period, and reports the data points produced per second.
//
//	go test -run '^$' -bench Trn2Report -benchmem ./receiver/neuronreceiver/internal/mapping/
func BenchmarkTrn2Report(b *testing.B) {
	doc, err := os.ReadFile(filepath.Join(reportsDir(), "trn2.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode+map", func(b *testing.B) {
		m := newMapper(defaultSettings())
		now := epoch
		points := 0
		b.ReportAllocs()
		b.SetBytes(int64(len(doc)))
		b.ResetTimer()
		for b.Loop() {
			r, _, err := report.Decode(doc)
			if err != nil {
				b.Fatal(err)
			}
			now = now.Add(5 * time.Second)
			points += m.Map(r, now).Metrics.DataPointCount()
		}
		b.ReportMetric(float64(points)/b.Elapsed().Seconds(), "points/s")
		b.ReportMetric(float64(points)/float64(b.N), "points/report")
	})
	b.Run("map", func(b *testing.B) {
		r, _, err := report.Decode(doc)
		if err != nil {
			b.Fatal(err)
		}
		m := newMapper(defaultSettings())
		now := epoch
		points := 0
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			now = now.Add(5 * time.Second)
			points += m.Map(r, now).Metrics.DataPointCount()
		}
		b.ReportMetric(float64(points)/b.Elapsed().Seconds(), "points/s")
	})
}
