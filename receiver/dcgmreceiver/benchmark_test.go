package dcgmreceiver

import (
	"bytes"
	"fmt"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/nvmltest"
)

// One scrape of an 8-GPU DGX H100 through NVML (go-nvml's mock server, whose
// own bookkeeping — a lock and a recorded call per NVML function — is
// included, so this is an upper bound on the receiver's cost).
func BenchmarkScrapeNVML8GPU(b *testing.B) {
	f, err := nvmltest.New(nvmltest.Options{Model: "h100"})
	require.NoError(b, err)
	h := start(b, manualConfig(), testWorld(b, f))
	h.waitNVML(b)
	h.scrape(b) // the first GPM sample
	benchmarkScrape(b, h, 8)
}

// One scrape of an 8-GPU dcgm-exporter (4.x text, 41 fields per GPU) over
// loopback HTTP, including the request and the parse.
func BenchmarkScrapeExporter8GPU(b *testing.B) {
	body := fixture(b, "dcgm-exporter-4.x-8xh100.txt")
	srv := serveText(b, func() []byte { return body })
	h := start(b, exporterConfig(srv.URL), testWorld(b, nil))
	benchmarkScrape(b, h, 8)
}

// One scrape of a 512-GPU dcgm-exporter page: the 8-GPU page's rows
// repeated for 64 sets of GPUs with their own indices, UUIDs and bus ids,
// the size of the load harness's largest node. What a scrape costs per
// device, the page's fixed costs spread thin.
func BenchmarkScrapeExporter512GPU(b *testing.B) {
	body := repeatGPUs(b, fixture(b, "dcgm-exporter-4.x-8xh100.txt"), 64)
	srv := serveText(b, func() []byte { return body })
	h := start(b, exporterConfig(srv.URL), testWorld(b, nil))
	benchmarkScrape(b, h, 512)
}

var (
	gpuLabel  = regexp.MustCompile(`gpu="(\d+)"`)
	uuidLabel = regexp.MustCompile(`UUID="(GPU-[0-9a-f-]+)"`)
	busLabel  = regexp.MustCompile(`pci_bus_id="0000([0-9A-Fa-f]{4}):`)
)

// repeatGPUs writes the page's sample rows sets times, set k with GPU
// indices shifted by k×8 and the UUIDs and PCI domains made k's own.
func repeatGPUs(b *testing.B, page []byte, sets int) []byte {
	b.Helper()
	var out bytes.Buffer
	out.Write(page)
	for k := 1; k < sets; k++ {
		for line := range bytes.Lines(page) {
			if bytes.HasPrefix(line, []byte("#")) {
				continue
			}
			line = gpuLabel.ReplaceAllFunc(line, func(m []byte) []byte {
				var idx int
				if _, err := fmt.Sscanf(string(m), `gpu="%d"`, &idx); err != nil {
					b.Fatal(err)
				}
				return fmt.Appendf(nil, `gpu="%d"`, idx+8*k)
			})
			line = uuidLabel.ReplaceAll(line, fmt.Appendf(nil, `UUID="${1}-%02x"`, k))
			line = busLabel.ReplaceAll(line, fmt.Appendf(nil, `pci_bus_id="%04X${1}:`, k))
			out.Write(line)
		}
	}
	return out.Bytes()
}

// benchmarkScrape reports points/s of wall time and, because the machines
// these run on are shared, also points per second of this process's CPU
// time (which includes the fake's side: the mock's bookkeeping or the
// loopback HTTP server).
func benchmarkScrape(b *testing.B, h *harness, resources int) {
	b.ReportAllocs()
	points := 0
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for b.Loop() {
		md := h.scrape(b)
		if md.ResourceMetrics().Len() != resources {
			b.Fatalf("scraped %d resources, want %d", md.ResourceMetrics().Len(), resources)
		}
		points += md.DataPointCount()
	}
	b.StopTimer()
	cpu := cpuTime(b) - cpu0
	b.ReportMetric(float64(points)/b.Elapsed().Seconds(), "points/s")
	b.ReportMetric(float64(points)/cpu.Seconds(), "points/cpu-s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/scrape")
	b.ReportMetric(float64(points)/float64(b.N), "points/scrape")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
