package acceleratorinsightsexporter

import (
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
)

// API latency for 10,000 devices from memory, through the real server,
// p50/p99 over all requests of the run: #rebuild makes every request build
// the view (the worst case, which only the first request of a process pays,
// and with Prometheus one after maxStale without requests), #write re-reads
// the logs side before every request as an acknowledge does, #live makes
// every request while a background rebuild runs (one that finds none ages
// the view past its second and so starts the next: rebuilds back to back),
// #cached answers from a current view.
func BenchmarkAPI10kDevices(b *testing.B) {
	cfg := testConfig()
	c := startConsole(b, cfg, nil, "bench")
	const nodes = 1250 // × 8 GPUs
	for i := 2; i >= 0; i-- {
		at := fixture.Now.Add(-time.Duration(i) * 30 * time.Second)
		c.clock.set(at)
		c.e.consumeMetrics(fixture.Large(nodes, at))
	}
	c.clock.set(fixture.Now)
	client := &http.Client{}
	for _, path := range []string{
		"/api/v1/fleet",
		"/api/v1/devices?page=1&page_size=50",
		"/api/v1/devices?page=10&page_size=50&team=team-07",
		"/api/v1/teams",
		"/api/v1/capacity",
		"/api/v1/filters",
		"/api/v1/device?id=GPU-00600-3",
		"/api/v1/reliability",
	} {
		for _, mode := range []string{"rebuild", "write", "live", "cached"} {
			b.Run(path+"#"+mode, func(b *testing.B) {
				lat := make([]time.Duration, 0, b.N)
				rebuilds := 0
				at := fixture.Now
				// One untimed request builds the view the modes start from.
				if resp, err := client.Get(c.url + path); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					switch mode {
					case "rebuild":
						// The worst case: this request builds the view.
						c.e.api.invalidate()
					case "write":
						c.e.api.invalidateLogs()
					case "live":
						// Answered while a rebuild runs in the
						// background. The clock moves a second and a
						// bit per rebuild, not per request (that would
						// age the view past maxStale within one rebuild,
						// which real time does not).
						c.e.api.mu.Lock()
						busy := c.e.api.refreshing
						c.e.api.mu.Unlock()
						if !busy {
							at = at.Add(1100 * time.Millisecond)
							c.clock.set(at)
							rebuilds++
						}
					}
					t0 := time.Now()
					resp, err := client.Get(c.url + path)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					lat = append(lat, time.Since(t0))
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("%s: %d", path, resp.StatusCode)
					}
				}
				c.e.api.wait()
				c.clock.set(fixture.Now)
				c.e.api.invalidate()
				slices.Sort(lat)
				if mode == "live" {
					b.ReportMetric(float64(rebuilds), "rebuilds")
				}
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				// nearest rank: the smallest latency at or above 99 % of
				// the requests
				b.ReportMetric(float64(lat[(len(lat)*99+99)/100-1].Microseconds())/1000, "p99-ms")
			})
		}
	}
}
