package inferencereceiver

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/collector/scraper/scraperhelper"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/metadata"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/expected")

// fixtureTime is when the fixtures' scrapes happen: ten minutes after the
// servers in them started (testdata/gen/gen_fixtures.py, T_START).
var fixtureTime = time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)

func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// fakeServer is an inference server's /metrics on loopback whose answer the
// test changes between scrapes.
type fakeServer struct {
	*httptest.Server
	mu     sync.Mutex
	body   string
	status int
	hits   int
	// contentType is what the page is served as (default the text
	// format's); accept is the Accept header of the last request.
	contentType string
	accept      string
}

func newFakeServer(t testing.TB, body string) *fakeServer {
	f := &fakeServer{body: body, status: http.StatusOK}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		body, status, ct := f.body, f.status, f.contentType
		f.hits++
		f.accept = r.Header.Get("Accept")
		f.mu.Unlock()
		if ct == "" {
			ct = "text/plain; version=0.0.4; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(status int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.body = status, body
}

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type harness struct {
	scraper *inferenceScraper
	clock   *clock
	host    *componenthealthtest.Host
	logs    *observer.ObservedLogs
}

func newHarness(t testing.TB, cfg *Config, opts ...func(*options)) *harness {
	t.Helper()
	require.NoError(t, cfg.Validate())
	core, logs := observer.New(zapcore.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	set.BuildInfo.Version = "test"
	clk := &clock{now: fixtureTime}
	o := options{now: clk.Now}
	for _, f := range opts {
		f(&o)
	}
	h := &harness{scraper: newScraper(cfg, set, o), clock: clk, host: &componenthealthtest.Host{}, logs: logs}
	require.NoError(t, h.scraper.start(context.Background(), h.host))
	t.Cleanup(func() { require.NoError(t, h.scraper.shutdown(context.Background())) })
	return h
}

func (h *harness) scrape(t testing.TB) pmetric.Metrics {
	t.Helper()
	md, err := h.scraper.scrape(context.Background())
	require.NoError(t, err)
	return md
}

func mustURL(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u
}

func newMetrics() pmetric.Metrics { return pmetric.NewMetrics() }

func scraperhelperTicker(ch chan time.Time) scraperhelper.ControllerOption {
	return scraperhelper.WithTickerChannel(ch)
}

func configFor(targets ...TargetConfig) *Config {
	cfg := createDefaultConfig()
	cfg.Targets = targets
	return cfg
}

// compareGolden checks md against testdata/expected/<name>.yaml, or
// rewrites it with -update. The loopback port changes from run to run.
func compareGolden(t *testing.T, name string, md pmetric.Metrics) {
	t.Helper()
	path := filepath.Join("testdata", "expected", name+".yaml")
	if *update {
		require.NoError(t, golden.WriteMetricsToFile(path, md, golden.SkipMetricTimestampNormalization()))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err)
	require.NoError(t, pmetrictest.CompareMetrics(want, md,
		pmetrictest.IgnoreResourceAttributeValue("server.port"),
	))
}

// flat indexes a scrape's metrics by name, for tests that look at a few.
type flat struct {
	resources []pcommon.Resource
	metrics   map[string][]pmetric.Metric
}

func flatten(md pmetric.Metrics) flat {
	f := flat{metrics: map[string][]pmetric.Metric{}}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		f.resources = append(f.resources, rm.Resource())
		for j := 0; j < rm.ScopeMetrics().Len(); j++ {
			ms := rm.ScopeMetrics().At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				f.metrics[ms.At(k).Name()] = append(f.metrics[ms.At(k).Name()], ms.At(k))
			}
		}
	}
	return f
}

func (f flat) count(name string) int { return len(f.metrics[name]) }

func (f flat) histogram(t testing.TB, name string) pmetric.HistogramDataPoint {
	t.Helper()
	ms := f.metrics[name]
	require.Len(t, ms, 1, name)
	require.Equal(t, pmetric.MetricTypeHistogram, ms[0].Type(), name)
	require.Equal(t, 1, ms[0].Histogram().DataPoints().Len(), name)
	return ms[0].Histogram().DataPoints().At(0)
}

// number finds the data point of name whose only attribute has the value
// attr ("" for a point without attributes).
func (f flat) number(t testing.TB, name, attr string) pmetric.NumberDataPoint {
	t.Helper()
	ms := f.metrics[name]
	require.Len(t, ms, 1, name)
	var dps pmetric.NumberDataPointSlice
	switch ms[0].Type() {
	case pmetric.MetricTypeGauge:
		dps = ms[0].Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		dps = ms[0].Sum().DataPoints()
	default:
		t.Fatalf("%s is a %s", name, ms[0].Type())
	}
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		v := ""
		dp.Attributes().Range(func(_ string, val pcommon.Value) bool { v = val.AsString(); return false })
		if v == attr {
			return dp
		}
	}
	t.Fatalf("%s has no point with attribute value %q", name, attr)
	return pmetric.NumberDataPoint{}
}

func (f flat) intValue(t testing.TB, name, attr string) int64 {
	t.Helper()
	return f.number(t, name, attr).IntValue()
}

func (f flat) doubleValue(t testing.TB, name, attr string) float64 {
	t.Helper()
	return f.number(t, name, attr).DoubleValue()
}
