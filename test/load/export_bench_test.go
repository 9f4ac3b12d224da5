//go:build load

package load

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	// Registers the zstd and snappy gRPC compressors the collector's
	// otlp_grpc exporter and otlp receiver use (gzip is gRPC's own).
	_ "go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/gzip"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// BenchmarkAgentExport is what the agent's otlp_grpc exporter does with a
// node's batch before it leaves: marshal the request and compress it, per
// compression the collector offers. The batch is a real 8-GPU agent's output
// of one interval (exporter/emfexporter/testdata), repeated for larger
// nodes. At 512 GPUs the load harness's CPU profile puts marshal + gzip at
// about a quarter of the agent's CPU (docs/performance.md).
//
//	go test -tags load -run '^$' -bench AgentExport -benchmem ./test/load/
func BenchmarkAgentExport(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join(e2etest.RepoRoot(), "exporter", "emfexporter", "testdata", "agent-8gpu-interval.json"))
	if err != nil {
		b.Fatal(err)
	}
	one, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(raw)
	if err != nil {
		b.Fatal(err)
	}
	for _, gpus := range []int{8, 64, 512} {
		md := repeat(one, gpus/8)
		points := md.DataPointCount()
		var marshaler pmetric.ProtoMarshaler
		for _, name := range []string{"none", "gzip", "zstd", "snappy"} {
			b.Run(fmt.Sprintf("%dgpu/%s", gpus, name), func(b *testing.B) {
				var comp encoding.Compressor
				if name != "none" {
					if comp = encoding.GetCompressor(name); comp == nil {
						b.Fatalf("no %s compressor registered", name)
					}
				}
				var out bytes.Buffer
				var raw, sent int
				b.ReportAllocs()
				for b.Loop() {
					body, err := marshaler.MarshalMetrics(md)
					if err != nil {
						b.Fatal(err)
					}
					raw = len(body)
					if comp == nil {
						sent = raw
						continue
					}
					out.Reset()
					w, err := comp.Compress(&out)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := w.Write(body); err != nil {
						b.Fatal(err)
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
					sent = out.Len()
				}
				b.ReportMetric(float64(points)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
				b.ReportMetric(float64(raw)/float64(sent), "ratio")
				b.ReportMetric(float64(sent)/float64(points), "bytes/point")
			})
		}
	}
}

// repeat is n copies of md's resources in one request, as a batch of a
// larger node carries.
func repeat(md pmetric.Metrics, n int) pmetric.Metrics {
	out := pmetric.NewMetrics()
	for range n {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			rms.At(i).CopyTo(out.ResourceMetrics().AppendEmpty())
		}
	}
	return out
}
