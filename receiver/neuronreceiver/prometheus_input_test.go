//go:build linux

package neuronreceiver

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componentstatus"
)

func promFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "prometheus", name))
	require.NoError(t, err)
	return b
}

// exporter stands in for neuron-monitor-prometheus.py: an HTTP server that
// answers each scrape with the next of its pages (the last one repeats),
// or with a status code while it is "starting".
type exporter struct {
	*httptest.Server
	pages    [][]byte
	failures int32 // scrapes to answer 503 first
	scrapes  atomic.Int32
	accept   atomic.Value
}

func newExporter(t *testing.T, failures int32, pages ...[]byte) *exporter {
	e := &exporter{pages: pages, failures: failures}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := e.scrapes.Add(1)
		e.accept.Store(r.Header.Get("Accept"))
		if n <= e.failures {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		i := min(int(n-e.failures)-1, len(e.pages)-1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(e.pages[i])
	}))
	t.Cleanup(e.Close)
	return e
}

func prometheusConfig(endpoint string) *Config {
	cfg := createDefaultConfig()
	cfg.Input, cfg.Endpoint, cfg.CollectionInterval = InputPrometheus, endpoint, 20*time.Millisecond
	return cfg
}

func (h *statusHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []componentstatus.Status
	for _, ev := range h.events {
		out = append(out, ev.Status())
	}
	return out
}

// The whole path with input: prometheus: two scrapes of the exporter give
// what the mapping goldens say (the same mapping as the JSON stream), and
// the health events of the ECC counters that grew.
func TestPrometheusInputEndToEnd(t *testing.T) {
	e := newExporter(t, 0, promFixture(t, "inf2-1.prom"), promFixture(t, "inf2-2.prom"))
	cfg := prometheusConfig(e.URL + "/metrics")
	require.NoError(t, cfg.Validate())
	h := newHarness(t, cfg)
	h.waitForReports(2)
	require.Eventually(t, func() bool { return h.events.LogRecordCount() >= 2 }, 10*time.Second, 10*time.Millisecond)
	h.stop()

	for i, name := range []string{"prometheus-inf2-1.yaml", "prometheus-inf2-2.yaml"} {
		want, err := golden.ReadMetrics(filepath.Join("internal", "mapping", "testdata", name))
		require.NoError(t, err)
		require.NoError(t, pmetrictest.CompareMetrics(want, h.metrics.AllMetrics()[i],
			pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()), name)
	}
	assert.Equal(t, "text/plain;version=0.0.4", e.accept.Load(), "asks for the text format, not OpenMetrics")
	assert.Empty(t, h.host.statuses(), "nothing broke: the collector's own OK after Start stands")
	assert.Empty(t, h.messages(), "a clean page logs nothing")
}

// An exporter that is not up yet: one recoverable error and one log line
// that says what to do, retries every interval, and metrics once it answers.
func TestPrometheusExporterDownIsRetried(t *testing.T) {
	e := newExporter(t, 5, promFixture(t, "inf2-1.prom"))
	h := newHarness(t, prometheusConfig(e.URL))
	h.waitForReports(1)
	h.stop()
	assert.GreaterOrEqual(t, e.scrapes.Load(), int32(6))
	errs := h.host.errors()
	require.Len(t, errs, 1, "one status event while it stays down: %v", errs)
	assert.Equal(t, "neuron-monitor-prometheus at "+e.URL+" is not reachable: answered 503 Service Unavailable", errs[0])
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}, h.host.statuses())
	assert.Equal(t, 1, h.logged("is not reachable: answered 503 Service Unavailable: start neuron-monitor's Prometheus exporter (neuron-monitor | neuron-monitor-prometheus.py --port 8000) or point endpoint: at it; retrying every 20ms"), "%v", h.messages())
	assert.Equal(t, 1, h.logged("neuron-monitor-prometheus is reachable again"))
}

func TestPrometheusNothingListening(t *testing.T) {
	e := newExporter(t, 0, promFixture(t, "inf2-1.prom"))
	url := e.URL
	e.Close()
	h := newHarness(t, prometheusConfig(url+"/metrics"))
	require.Eventually(t, func() bool { return len(h.host.errors()) > 0 }, 10*time.Second, 5*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // several retries
	h.stop()
	assert.Contains(t, h.host.errors()[0], "neuron-monitor-prometheus at "+url+"/metrics is not reachable: ")
	assert.Contains(t, h.host.errors()[0], "connection refused")
	assert.Equal(t, 1, h.logged("is not reachable"), "rate-limited: %v", h.messages())
	assert.Empty(t, h.metrics.AllMetrics())
}

// Bad lines cost those lines: the rest of the page is used, and one
// rate-limited warning names where they are.
func TestPrometheusBadLinesAreSkipped(t *testing.T) {
	lines := strings.Split(string(promFixture(t, "inf2-1.prom")), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, `execution_latency_seconds{`) && strings.Contains(l, `percentile="p50"`) {
			lines[i] = l[:len(l)/2] // torn
		}
	}
	lines = append(lines[:3], append([]string{"<html>502 Bad Gateway</html>"}, lines[3:]...)...)
	page := []byte(strings.Join(lines, "\n"))
	e := newExporter(t, 0, page)
	h := newHarness(t, prometheusConfig(e.URL))
	h.waitForReports(3)
	h.stop()
	assert.Equal(t, 1, h.logged("skipped 3 of 194 lines that could not be read; the rest of the page is used"), "%v", h.messages())
	assert.Equal(t, 1, h.logged(`line 4, column 1: metric name expected: "<html>502 Bad Gateway</html>"`))
	md := h.metrics.AllMetrics()[0]
	assert.Equal(t, 3, md.ResourceMetrics().Len(), "the device and both cores")
	want, err := golden.ReadMetrics(filepath.Join("internal", "mapping", "testdata", "prometheus-inf2-1.yaml"))
	require.NoError(t, err)
	assert.Equal(t, want.DataPointCount()-2, md.DataPointCount(), "everything but the two torn p50 latencies")
	assert.Empty(t, h.host.statuses(), "nothing broke: the collector's own OK after Start stands")
}

// Pointed at some other exporter: said once, as a recoverable error.
func TestPrometheusForeignPage(t *testing.T) {
	e := newExporter(t, 0, []byte("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 3\n"))
	h := newHarness(t, prometheusConfig(e.URL))
	require.Eventually(t, func() bool { return e.scrapes.Load() >= 3 }, 10*time.Second, 5*time.Millisecond)
	h.stop()
	errs := h.host.errors()
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "has none of neuron-monitor-prometheus.py's families")
	assert.Equal(t, 1, h.logged("is endpoint that exporter's /metrics?"))
	assert.Empty(t, h.metrics.AllMetrics())
}

// A page cut short (the exporter died mid-write) is used as far as it goes,
// with a warning; the next scrape is read whole.
func TestPrometheusPageCutShort(t *testing.T) {
	page := promFixture(t, "inf2-1.prom")
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Content-Length", strconv.Itoa(len(page)))
			_, _ = w.Write(page[:len(page)/2])
			panic(http.ErrAbortHandler) // closes the connection mid-body
		}
		_, _ = w.Write(page)
	}))
	defer srv.Close()
	h := newHarness(t, prometheusConfig(srv.URL))
	require.Eventually(t, func() bool {
		for _, md := range h.metrics.AllMetrics() {
			if md.ResourceMetrics().Len() == 3 {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond)
	h.stop()
	assert.Equal(t, 1, h.logged("the page ended early after "+strconv.Itoa(len(page)/2)+" bytes (unexpected EOF); the lines read are used"), "%v", h.messages())
	assert.Zero(t, h.logged("is not reachable"), "a cut page is bad input, not an outage")
}
