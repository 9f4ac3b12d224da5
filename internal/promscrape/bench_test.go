package promscrape

import (
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// benchPages are an 8×H100 dcgm-exporter page with pods (410 lines) and a
// two-engine vLLM page with its histograms (566 lines).
var benchPages = []string{"dcgm-exporter-4.x-8xh100.txt", "vllm_v1.txt"}

// BenchmarkReader streams each page as the dcgm-exporter source does.
func BenchmarkReader(b *testing.B) {
	for _, name := range benchPages {
		text := readPage(b, name)
		b.Run(name, func(b *testing.B) {
			src := strings.NewReader(text)
			r := NewReader(src)
			samples := 0
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			cpu := cpuTime()
			for b.Loop() {
				src.Reset(text)
				r.Reset(src)
				samples = 0
				for en := r.Next(); en != EntryEnd; en = r.Next() {
					switch en {
					case EntrySample:
						samples++
					case EntryInvalid:
						b.Fatal(r.Invalid())
					}
				}
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// BenchmarkParse reads each whole page as the inference receiver does.
func BenchmarkParse(b *testing.B) {
	for _, name := range benchPages {
		text := readPage(b, name)
		b.Run(name, func(b *testing.B) {
			samples := 0
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			cpu := cpuTime()
			for b.Loop() {
				pg := Parse(text)
				if pg.Errors.Count > 0 {
					b.Fatal(pg.Errors.First)
				}
				samples = len(pg.Samples)
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// BenchmarkExpfmt is the upstream parser on the same pages, for scale.
func BenchmarkExpfmt(b *testing.B) {
	for _, name := range benchPages {
		text := readPage(b, name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			cpu := cpuTime()
			for b.Loop() {
				parser := expfmt.NewTextParser(model.UTF8Validation)
				if _, err := parser.TextToMetricFamilies(strings.NewReader(text)); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkOpenMetrics reads vLLM's page as prometheus_client serves it
// as OpenMetrics (constructed with 57 exemplars on its latency buckets),
// with its exemplars and without (read as format 0.0.4), whole and
// streamed: the cost of the exemplars is the difference.
func BenchmarkOpenMetrics(b *testing.B) {
	const name = "vllm_v1_openmetrics.txt"
	text := readPage(b, name)
	for _, om := range []bool{true, false} {
		mode := "exemplars"
		if !om {
			mode = "unread"
		}
		b.Run("Parse/"+mode, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			cpu := cpuTime()
			for b.Loop() {
				pg := ParseOptions{OpenMetrics: om}.Parse(text)
				if pg.Errors.Count > 0 || pg.ExemplarErrors.Count > 0 || om != (len(pg.Exemplars) > 0) {
					b.Fatal(pg.Errors.First, pg.ExemplarErrors.First)
				}
			}
			reportCPU(b, cpu)
		})
		b.Run("Reader/"+mode, func(b *testing.B) {
			src := strings.NewReader(text)
			r := NewReader(src)
			r.OpenMetrics = om
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			cpu := cpuTime()
			for b.Loop() {
				src.Reset(text)
				r.Reset(src)
				for en := r.Next(); en != EntryEnd; en = r.Next() {
					if en == EntryInvalid {
						b.Fatal(r.Invalid())
					}
				}
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkParseInto is BenchmarkParse reusing one Page, as a scraper of
// the same endpoint does.
func BenchmarkParseInto(b *testing.B) {
	for _, name := range benchPages {
		text := readPage(b, name)
		b.Run(name, func(b *testing.B) {
			var pg Page
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			cpu := cpuTime()
			for b.Loop() {
				ParseOptions{}.ParseInto(&pg, text)
				if pg.Errors.Count > 0 {
					b.Fatal(pg.Errors.First)
				}
			}
			reportCPU(b, cpu)
		})
	}
}
