package dcgmreceiver

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
	"github.com/otelcol-accel/otelcol-accel/internal/sharedcomponent"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/nvmltest"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// testWorld is the outside world of a test: a fake NVIDIA host (or none), a
// fixed host name and no MPS pipe directory unless a test sets one.
func testWorld(t testing.TB, f *nvmltest.Fake) outside {
	w := realWorld()
	if f != nil {
		w.nvml = func(string) nvml.Interface { return f.Server }
	}
	w.hostname = func() (string, error) { return "gpu-node-1", nil }
	noMPS := filepath.Join(t.TempDir(), "no-mps")
	w.getenv = func(k string) string {
		if k == "CUDA_MPS_PIPE_DIRECTORY" {
			return noMPS
		}
		return ""
	}
	w.retryStart = time.Millisecond
	return w
}

// manualConfig never scrapes on its own: tests call scrape directly.
func manualConfig() *Config {
	cfg := createDefaultConfig()
	cfg.CollectionInterval = time.Hour
	cfg.InitialDelay = time.Hour
	return cfg
}

// statusHost records component status events.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
}

func newStatusHost() *statusHost {
	return &statusHost{Host: componentTestHost{}}
}

func (h *statusHost) Report(e *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func (h *statusHost) statuses() []*componentstatus.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*componentstatus.Event(nil), h.events...)
}

type componentTestHost struct{}

func (componentTestHost) GetExtensions() map[component.ID]component.Component { return nil }

type harness struct {
	r       *dcgmReceiver
	metrics *consumertest.MetricsSink
	logs    *consumertest.LogsSink
	host    *statusHost
	logged  *observer.ObservedLogs
	comps   []component.Component
}

// start builds the receiver through its factory with both pipelines, as
// the collector would, and starts it.
func start(t testing.TB, cfg *Config, w outside, opts ...func(*receiver.Settings)) *harness {
	t.Helper()
	core, logged := observer.New(zapcore.DebugLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	for _, o := range opts {
		o(&set)
	}
	f := newFactory(w)
	h := &harness{metrics: new(consumertest.MetricsSink), logs: new(consumertest.LogsSink), host: newStatusHost(), logged: logged}
	mr, err := f.CreateMetrics(context.Background(), set, cfg, h.metrics)
	require.NoError(t, err)
	lr, err := f.CreateLogs(context.Background(), set, cfg, h.logs)
	require.NoError(t, err)
	h.r = mr.(*sharedcomponent.Component[*dcgmReceiver]).Unwrap()
	require.Same(t, h.r, lr.(*sharedcomponent.Component[*dcgmReceiver]).Unwrap(), "one instance for both pipelines")
	h.comps = []component.Component{mr, lr}
	for _, c := range h.comps {
		require.NoError(t, c.Start(context.Background(), h.host))
	}
	t.Cleanup(func() {
		for _, c := range h.comps {
			require.NoError(t, c.Shutdown(context.Background()))
		}
	})
	return h
}

func (h *harness) scrape(t testing.TB) pmetric.Metrics {
	t.Helper()
	md, err := h.r.scrape(context.Background())
	require.NoError(t, err)
	return md
}

func (h *harness) waitNVML(t testing.TB) {
	t.Helper()
	require.Eventually(t, func() bool {
		s, ok := h.r.src.(interface{ Ready() bool })
		return ok && s.Ready()
	}, 10*time.Second, time.Millisecond)
}

func (h *harness) allLogs() plog.Logs {
	out := plog.NewLogs()
	for _, l := range h.logs.AllLogs() {
		l.ResourceLogs().MoveAndAppendTo(out.ResourceLogs())
	}
	return out
}

func compareMetricsGolden(t *testing.T, name string, actual pmetric.Metrics) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *updateGolden {
		require.NoError(t, golden.WriteMetrics(t, path, actual))
	}
	expected, err := golden.ReadMetrics(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Empty(t, countcheck.Violations(actual), "every quantity is counted once (internal/accelschema/countcheck)")
	require.NoError(t, pmetrictest.CompareMetrics(expected, actual,
		pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
		// golden files are written sorted.
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()))
}

func compareLogsGolden(t *testing.T, name string, actual plog.Logs) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *updateGolden {
		require.NoError(t, golden.WriteLogs(t, path, actual))
	}
	expected, err := golden.ReadLogs(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.NoError(t, plogtest.CompareLogs(expected, actual, plogtest.IgnoreTimestamp(), plogtest.IgnoreObservedTimestamp()))
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "exporter", name))
	require.NoError(t, err)
	return b
}

func confmapFromYAML(t *testing.T, text string) *confmap.Conf {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	cm, err := confmaptest.LoadConf(path)
	require.NoError(t, err)
	return cm
}
