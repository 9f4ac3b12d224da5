package acceleratorinsightsexporter

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/distributions/otelcol-accel/dashboards/promschema"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// renderPage writes metrics as the gateway's prometheus exporter does with
// every resource attribute as a label (gateway.yaml's
// resource_constant_labels: ["*"]): names and labels translated by
// promschema, counters with _total, histograms as cumulative _bucket, _sum
// and _count. No timestamps: Prometheus stamps the scrape.
func renderPage(t testing.TB, md pmetric.Metrics) string {
	defs := map[string]accelschema.MetricDef{}
	for _, m := range accelschema.Metrics {
		defs[m.Name] = m
	}
	// Untyped samples (no TYPE lines): Prometheus stores them alike, and a
	// family's samples need not be adjacent.
	var b strings.Builder
	labelsOf := func(res, attrs pcommon.Map) string {
		kv := map[string]string{}
		for _, m := range []pcommon.Map{res, attrs} {
			m.Range(func(k string, v pcommon.Value) bool {
				name, err := promschema.LabelName(k)
				if err != nil {
					t.Fatal(err)
				}
				kv[name] = v.AsString()
				return true
			})
		}
		keys := make([]string, 0, len(kv))
		for k := range kv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%s", k, strconv.Quote(kv[k])))
		}
		return strings.Join(parts, ",")
	}
	withLabel := func(labels, extra string) string {
		if labels == "" {
			return extra
		}
		return labels + "," + extra
	}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		res := rms.At(i).Resource().Attributes()
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				def, ok := defs[m.Name()]
				if !ok {
					t.Fatalf("fixture metric %s is not registered", m.Name())
				}
				name, err := promschema.MetricName(def)
				require.NoError(t, err)
				switch m.Type() {
				case pmetric.MetricTypeGauge, pmetric.MetricTypeSum:
					var pts pmetric.NumberDataPointSlice
					if m.Type() == pmetric.MetricTypeGauge {
						pts = m.Gauge().DataPoints()
					} else {
						pts = m.Sum().DataPoints()
					}
					for p := 0; p < pts.Len(); p++ {
						pt := pts.At(p)
						v := pt.DoubleValue()
						if pt.ValueType() == pmetric.NumberDataPointValueTypeInt {
							v = float64(pt.IntValue())
						}
						fmt.Fprintf(&b, "%s{%s} %s\n", name, labelsOf(res, pt.Attributes()), strconv.FormatFloat(v, 'g', -1, 64))
					}
				case pmetric.MetricTypeHistogram:
					pts := m.Histogram().DataPoints()
					for p := 0; p < pts.Len(); p++ {
						pt := pts.At(p)
						labels := labelsOf(res, pt.Attributes())
						var cum uint64
						for bi := 0; bi < pt.BucketCounts().Len(); bi++ {
							cum += pt.BucketCounts().At(bi)
							le := "+Inf"
							if bi < pt.ExplicitBounds().Len() {
								le = strconv.FormatFloat(pt.ExplicitBounds().At(bi), 'g', -1, 64)
							}
							fmt.Fprintf(&b, "%s_bucket{%s} %d\n", name, withLabel(labels, `le="`+le+`"`), cum)
						}
						fmt.Fprintf(&b, "%s_sum{%s} %g\n%s_count{%s} %d\n", name, labels, pt.Sum(), name, labels, pt.Count())
					}
				}
			}
		}
	}
	return b.String()
}

// isRate reports whether a JSON path is a counter's rate (waste per hour,
// requests, tokens and preemptions per second).
func isRate(path string) bool {
	for _, k := range []string{"waste", "fragmentation", "request_rate", "per_second"} {
		if strings.Contains(path, k) {
			return true
		}
	}
	return false
}

// numbersClose compares two decoded JSON values: same shape, same strings,
// numbers within a relative 1e-3 (rates are computed by two engines), keys
// in skip ignored.
func numbersClose(t *testing.T, path string, want, got any, skip ...string) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		require.True(t, ok, "%s: %v is not an object", path, got)
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		for k := range keys {
			if slices.Contains(skip, k) {
				continue
			}
			numbersClose(t, path+"."+k, w[k], g[k], skip...)
		}
	case []any:
		g, ok := got.([]any)
		require.True(t, ok, "%s: %v is not a list", path, got)
		require.Len(t, g, len(w), "%s: memory %v, prometheus %v", path, w, g)
		for i := range w {
			numbersClose(t, fmt.Sprintf("%s[%d]", path, i), w[i], g[i], skip...)
		}
	case float64:
		g, ok := got.(float64)
		require.True(t, ok, "%s: memory %v, prometheus %v", path, w, got)
		tol := 1e-3
		if isRate(path) {
			// rate() extrapolates to the window's edges only when the
			// first and last scrapes are within 1.1 intervals of them; a
			// scrape late on a loaded machine makes it read a few per cent
			// low. Everything else (prices, shares, counts, percentiles)
			// must agree to 0.1 %.
			tol = 0.05
		}
		require.InDelta(t, w, g, tol*math.Max(1, math.Abs(w)), "%s: memory %v, prometheus %v", path, w, g)
	default:
		require.Equal(t, want, got, "%s", path)
	}
}

// The Prometheus backend against Debian's real Prometheus, scraping a page
// rendered from the fixture at each scrape, answers every endpoint as the
// memory backend does on the same fleet.
func TestPrometheusBackendAgreesWithMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus and scrapes for 15 s")
	}
	const window = 10 * time.Second
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, renderPage(t, fixture.Metrics(time.Now())))
	}))
	defer page.Close()
	host := strings.TrimPrefix(page.URL, "http://")
	prom := e2etest.StartPrometheus(t, e2etest.PrometheusOptions{Targets: []string{host}, ScrapeInterval: time.Second})

	// Wait until the rate window is covered by scrapes (a start-up wait,
	// not an assertion on time).
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for {
		samples, err := prom.Query(ctx, `count_over_time(accelerator_price_USD_per_hour{hw_id="GPU-A0"}[1m])`)
		if err == nil && len(samples) == 1 && samples[0].Value >= window.Seconds()+3 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("prometheus has not scraped the page long enough: %v %v\n%s", samples, err, prom.Output())
		case <-time.After(500 * time.Millisecond):
		}
	}

	pcfg := testConfig()
	pcfg.Backend = BackendPrometheus
	pcfg.Prometheus.Endpoint = prom.URL
	pcfg.Prometheus.Step = time.Second
	pcfg.RateWindow = window
	require.NoError(t, pcfg.Validate())
	pc := startConsole(t, pcfg, nil, "prom")
	mcfg := testConfig()
	mcfg.RateWindow = window
	mc := startConsole(t, mcfg, nil, "mem")

	now := time.Now()
	for _, c := range []*console{pc, mc} {
		c.clock.set(now)
	}
	for i := 2; i >= 0; i-- {
		at := now.Add(-time.Duration(i) * 4 * time.Second)
		mc.clock.set(at)
		mc.e.consumeMetrics(fixture.Metrics(at))
	}
	mc.clock.set(now)
	logs := fixture.Logs(now)
	mc.e.consumeLogs(logs)
	pc.e.consumeLogs(logs)
	mc.e.api.invalidate()

	var sess struct {
		Backend string `json:"backend"`
	}
	pc.getJSON(t, "/api/v1/session", &sess)
	require.Equal(t, "prometheus", sess.Backend)

	for _, path := range goldenPaths {
		t.Run(path, func(t *testing.T) {
			var want, got any
			mc.getJSON(t, path, &want)
			pc.getJSON(t, path, &got)
			// Series are sampled differently (scrapes vs the agents'
			// points); each backend's golden or range test covers them.
			numbersClose(t, path, want, got, "generated_at", "series")
		})
	}

	// The device charts come from query_range: every chart the memory
	// backend draws for GPU-A0, with points of the fixture's values.
	var dev struct {
		Series struct {
			Metrics []struct {
				Name   string       `json:"name"`
				Points [][2]float64 `json:"points"`
			} `json:"metrics"`
		} `json:"series"`
	}
	pc.getJSON(t, "/api/v1/device?id=GPU-A0&window=1m", &dev)
	names := map[string]float64{}
	for _, s := range dev.Series.Metrics {
		require.NotEmpty(t, s.Points, s.Name)
		names[s.Name] = s.Points[len(s.Points)-1][1]
	}
	require.Equal(t, map[string]float64{"utilization": 0.8, "memory_used": 40 << 30, "power": 500, "temperature": 70,
		"sm_active": 0.7, "tensor_active": 0.5, "dram_active": 0.4, "gr_engine_active": 0.85}, names)

	// A store that does not answer is an error the page can show, not a
	// crash.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	dcfg := testConfig()
	dcfg.Backend = BackendPrometheus
	dcfg.Prometheus.Endpoint = dead
	dc := startConsole(t, dcfg, nil, "dead")
	resp, body := dc.get(t, "/api/v1/fleet")
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	var e struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &e))
	require.Contains(t, e.Error, "prometheus backend")
}
