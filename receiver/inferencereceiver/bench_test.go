package inferencereceiver

import (
	"context"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// BenchmarkScrapeVLLM is one scrape of a two-engine vLLM server on loopback:
// HTTP, parse, normalize, cumulative state, pdata.
func BenchmarkScrapeVLLM(b *testing.B) {
	srv := newFakeServer(b, readFixture(b, "vllm_v1.txt"))
	h := newHarness(b, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	points := h.scrape(b).DataPointCount()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		md, err := h.scraper.scrape(context.Background())
		if err != nil || md.DataPointCount() != points {
			b.Fatalf("scrape: %v, %d points", err, md.DataPointCount())
		}
	}
	b.ReportMetric(float64(points)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
	b.ReportMetric(float64(points), "points/scrape")
}

// BenchmarkProcessVLLM is the same without HTTP: what the receiver spends
// per scrape of its own.
func BenchmarkProcessVLLM(b *testing.B) {
	benchProcess(b, promscrape.Response{Text: readFixture(b, "vllm_v1.txt")})
}

// BenchmarkProcessVLLMOpenMetrics is BenchmarkProcessVLLM of the same page
// as OpenMetrics with 57 exemplars on its latency buckets (constructed,
// testdata/gen): the cost of reading and keeping exemplars. Every scrape
// after the first finds them unchanged and emits none (exemplars.go).
func BenchmarkProcessVLLMOpenMetrics(b *testing.B) {
	benchProcess(b, promscrape.Response{Text: readFixture(b, omFixture), ContentType: openMetricsType})
}

func benchProcess(b *testing.B, page promscrape.Response) {
	text := page.Text
	tgt := newTarget("bench", mustURL(b, "http://127.0.0.1:8000/metrics"), normalize.VLLM, "", "", 0, nil)
	e := emitter{}
	samples := len(promscrape.Parse(text).Samples)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		res := tgt.process(page, fixtureTime)
		if res.err != nil {
			b.Fatal(res.err)
		}
		md := newMetrics()
		e.emit(md, tgt, res.kind, res.outputs)
	}
	b.ReportMetric(float64(samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}
