package neuronreceiver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
)

// BenchmarkStream pushes trn2.48xlarge reports (16 devices, 64 NeuronCores)
// through the receiver's whole stream path: framing, decoding, mapping and
// handing the result to the next consumer.
//
//	go test -run '^$' -bench Stream -benchmem ./receiver/neuronreceiver/
func BenchmarkStream(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "reports", "trn2.json"))
	if err != nil {
		b.Fatal(err)
	}
	var doc bytes.Buffer
	if err := json.Compact(&doc, raw); err != nil {
		b.Fatal(err)
	}
	doc.WriteByte('\n')
	const perRun = 50
	stream := bytes.Repeat(doc.Bytes(), perRun)

	r, err := newReceiver(createDefaultConfig(), receivertest.NewNopSettings(metadata.Type))
	if err != nil {
		b.Fatal(err)
	}
	sink := new(consumertest.MetricsSink)
	r.setMetricsConsumer(sink)
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	b.ResetTimer()
	points := 0
	for b.Loop() {
		r.consume("bench", bytes.NewReader(stream))
		points += sink.DataPointCount()
		sink.Reset()
	}
	b.ReportMetric(float64(points)/b.Elapsed().Seconds(), "points/s")
	b.ReportMetric(float64(b.N*perRun)/b.Elapsed().Seconds(), "reports/s")
}
