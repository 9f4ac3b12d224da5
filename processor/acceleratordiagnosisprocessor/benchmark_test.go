package acceleratordiagnosisprocessor

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// BenchmarkScrape measures the added work of one scrape's batch at the
// gateway: 100 endpoints of 4 replicas, each replica's server resource
// (TTFT and ITL histograms, KV cache, queue, preemptions) and its GPU's
// (activity, throttle reasons): 800 resources. Every fourth batch closes
// every endpoint's window and judges it.
func BenchmarkScrape(b *testing.B) {
	f := &fleet{}
	for e := 0; e < 100; e++ {
		for r := 0; r < 4; r++ {
			pod := fmt.Sprintf("pod-%d-%d", e, r)
			sv := newServer(pod)
			sv.workload = fmt.Sprintf("endpoint-%d", e)
			f.servers = append(f.servers, sv)
			f.gpus = append(f.gpus, &gpu{id: "GPU-" + pod, pod: pod, sm: 0.5, tensor: 0.4})
		}
	}
	batches := make([]pmetric.Metrics, 64)
	for i := range batches {
		batches[i] = f.batch(at(time.Duration(i) * step))
	}
	p := newDiagnosisProcessor(processortestSettings(), testConfig())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The batches are reused: each pass over them is a restart of the
		// servers' counters, as far as the processor can tell; one batch
		// in 64 is a first sight without deltas.
		md := batches[i%len(batches)]
		if _, err := p.processMetrics(b.Context(), md); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/800, "ns/resource")
	// 400 servers × 6 points + 400 GPUs × 4 points.
	b.ReportMetric(4000*float64(b.N)/b.Elapsed().Seconds(), "points/s")
}
