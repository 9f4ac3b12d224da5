//go:build linux

package neuronreceiver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
)

var epoch = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// statusHost records the status events the receiver reports.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
}

func (h *statusHost) errors() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, ev := range h.events {
		if ev.Err() != nil {
			out = append(out, ev.Err().Error())
		}
	}
	return out
}

type harness struct {
	t       *testing.T
	cfg     *Config
	set     receiver.Settings
	logs    *observer.ObservedLogs
	metrics *consumertest.MetricsSink
	events  *consumertest.LogsSink
	host    *statusHost
	rcv     *neuronReceiver
	stop    func()
}

func newHarness(t *testing.T, cfg *Config, opts ...func(*receiver.Settings)) *harness {
	core, logs := observer.New(zapcore.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	set.ID = component.MustNewIDWithName(metadata.Type.String(), t.Name())
	for _, o := range opts {
		o(&set)
	}
	h := &harness{t: t, cfg: cfg, set: set, logs: logs, metrics: new(consumertest.MetricsSink), events: new(consumertest.LogsSink), host: &statusHost{Host: componenttestHost{}}}
	f := NewFactory()
	mr, err := f.CreateMetrics(context.Background(), set, cfg, h.metrics)
	require.NoError(t, err)
	lr, err := f.CreateLogs(context.Background(), set, cfg, h.events)
	require.NoError(t, err)
	h.rcv = unwrap(mr)
	require.Same(t, h.rcv, unwrap(lr), "the metrics and logs pipelines share one receiver")
	// A fake clock: one report every 5 s from epoch, like the goldens.
	var mu sync.Mutex
	n := 0
	h.rcv.clock = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return epoch.Add(time.Duration(n-1) * 5 * time.Second)
	}
	require.NoError(t, mr.Start(context.Background(), h.host))
	require.NoError(t, lr.Start(context.Background(), h.host))
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			require.NoError(t, mr.Shutdown(context.Background()))
			require.NoError(t, lr.Shutdown(context.Background()))
		})
	}
	t.Cleanup(h.stop)
	return h
}

type componenttestHost struct{}

func (componenttestHost) GetExtensions() map[component.ID]component.Component { return nil }

func unwrap(c any) *neuronReceiver {
	type unwrapper interface{ Unwrap() *neuronReceiver }
	return c.(unwrapper).Unwrap()
}

func (h *harness) waitForReports(n int) {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return len(h.metrics.AllMetrics()) >= n }, 60*time.Second, 10*time.Millisecond,
		"got %d of %d reports; log: %v", len(h.metrics.AllMetrics()), n, h.messages())
}

func (h *harness) messages() []string {
	var out []string
	for _, e := range h.logs.All() {
		msg := e.Message
		for k, v := range e.ContextMap() {
			msg += fmt.Sprintf(" %s=%v", k, v)
		}
		out = append(out, msg)
	}
	return out
}

func (h *harness) logged(substr string) int {
	n := 0
	for _, m := range h.messages() {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

func subprocessConfig(t *testing.T, fixture string, extra ...string) *Config {
	cfg := createDefaultConfig()
	cfg.Command = fakeNeuronMonitor
	cfg.Period = 5 * time.Second // as the goldens assume; --interval makes the fake fast
	cfg.Args = append([]string{"--fixture", filepath.Join("testdata", "reports", fixture), "--interval", "20ms"}, extra...)
	cfg.RestartBackoff = BackoffConfig{InitialInterval: 10 * time.Millisecond, MaxInterval: 40 * time.Millisecond}
	cfg.ShutdownGracePeriod = 2 * time.Second
	require.NoError(t, cfg.Validate())
	return cfg
}

// The whole path: a neuron-monitor child prints three inf2 reports; the
// receiver emits exactly what the mapping goldens say, raises the health
// events, and on shutdown stops the child and removes its config file.
func TestSubprocessEndToEnd(t *testing.T) {
	dir := t.TempDir()
	recorded, pidfile := filepath.Join(dir, "config.txt"), filepath.Join(dir, "pid")
	h := newHarness(t, subprocessConfig(t, "inf2.json", "--record-config", recorded, "--pidfile", pidfile))
	h.waitForReports(3)
	require.Eventually(t, func() bool { return h.events.LogRecordCount() >= 3 }, 10*time.Second, 10*time.Millisecond)

	all := h.metrics.AllMetrics()
	for i, name := range []string{"inf2-1.yaml", "inf2-2.yaml", "inf2-3.yaml"} {
		want, err := golden.ReadMetrics(filepath.Join("internal", "mapping", "testdata", name))
		require.NoError(t, err)
		require.NoError(t, pmetrictest.CompareMetrics(want, all[i],
			pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()), name)
	}

	rec, err := os.ReadFile(recorded)
	require.NoError(t, err)
	cfgText, args, _ := strings.Cut(string(rec), "\nargs: ")
	var mc monitorConfig
	require.NoError(t, json.Unmarshal([]byte(cfgText), &mc))
	assert.Equal(t, "5s", mc.Period)
	require.Len(t, mc.NeuronRuntimes, 1)
	assert.Equal(t, ".*", mc.NeuronRuntimes[0].TagFilter)
	assert.Equal(t, []metricGroup{{groupNeuronCoreCounters}, {groupMemoryUsed}, {groupRuntimeVCPUUsage}, {groupExecutionStats}}, mc.NeuronRuntimes[0].Metrics)
	assert.Equal(t, []metricGroup{{groupHWCounters}}, mc.SystemMetrics)
	assert.True(t, strings.HasPrefix(args, "-c "+h.rcv.tmpDir+"/neuron-monitor.json --fixture "), "args: -c <generated config> first, then the configured args: %s", args)

	pidText, err := os.ReadFile(pidfile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(string(pidText))
	require.NoError(t, err)
	tmp := h.rcv.tmpDir
	h.stop()
	assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "neuron-monitor is stopped and reaped")
	assert.NoDirExists(t, tmp, "the generated config is removed")
	assert.Equal(t, 1, h.logged("neuron-monitor started"))
}

// Malformed and truncated reports are skipped with a message that says what
// and where; the reports around them are used.
func TestMalformedAndTruncatedReportsAreSkipped(t *testing.T) {
	h := newHarness(t, subprocessConfig(t, "trn2.json", "--malformed-every", "3", "--truncate-every", "4"))
	h.waitForReports(6)
	h.stop()
	assert.Equal(t, 1, h.logged("report #3 at byte"), "the malformed report is named, once per minute: %v", h.messages())
	assert.Equal(t, 1, h.logged("malformed JSON: invalid character 'o'"))
	assert.Equal(t, 1, h.logged("truncated document: report #4 at byte"))
	for _, md := range h.metrics.AllMetrics() {
		assert.Equal(t, 80, md.ResourceMetrics().Len(), "every report that got through is complete")
	}
}

// Pretty-printed output is read as well as one report per line.
func TestPrettyPrintedOutput(t *testing.T) {
	h := newHarness(t, subprocessConfig(t, "inf2.json", "--pretty"))
	h.waitForReports(2)
	h.stop()
	assert.Zero(t, h.logged("truncated"), "%v", h.messages())
	assert.Zero(t, h.logged("malformed"))
}

// A child that keeps crashing (mid-report) is restarted with backoff; its
// stderr is forwarded, rate-limited; each crash is a recoverable error.
func TestCrashLoop(t *testing.T) {
	h := newHarness(t, subprocessConfig(t, "inf2.json", "--exit-after", "1", "--exit-code", "3", "--crash-mid-report", "--stderr", "ERROR: neuron device 0 reset in progress"))
	h.waitForReports(4) // one per start
	require.Eventually(t, func() bool { return len(h.host.errors()) >= 3 }, 10*time.Second, 10*time.Millisecond)
	h.stop()
	assert.Contains(t, h.host.errors()[0], "exited after")
	assert.Contains(t, h.host.errors()[0], "exit status 3")
	assert.Equal(t, 1, h.logged("line=ERROR: neuron device 0 reset in progress"), "stderr is forwarded once per minute: %v", h.messages())
	assert.Equal(t, 1, h.logged("exit status 3; restarting"))
	assert.GreaterOrEqual(t, h.logged("truncated document"), 1, "the half report before each crash is reported as truncated")
}

// The message an end-to-end test on a machine without Neuron looks for.
const missingMessage = "neuron-monitor not found in PATH: install aws-neuronx-tools or set command: to its full path in the neuron receiver's config"

func TestMissingNeuronMonitorGivesOneClearMessage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	cfg := createDefaultConfig()
	cfg.RestartBackoff = BackoffConfig{InitialInterval: 5 * time.Millisecond, MaxInterval: 10 * time.Millisecond}
	h := newHarness(t, cfg)
	require.Eventually(t, func() bool { return h.logged("retry_in") >= 1 }, 10*time.Second, 5*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // several retries
	h.stop()
	assert.Equal(t, 1, h.logged(missingMessage), "%v", h.messages())
	errs := h.host.errors()
	require.Len(t, errs, 1, "one status event while the binary stays missing")
	assert.Equal(t, missingMessage, errs[0])
	assert.Empty(t, h.metrics.AllMetrics())
}

// input: file with a FIFO that neuron-monitor, in another container,
// writes to.
func TestFIFOInput(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "neuron-monitor.fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	cfg := createDefaultConfig()
	cfg.Input, cfg.Path = InputFile, fifo
	require.NoError(t, cfg.Validate())
	h := newHarness(t, cfg)

	monitorCfg := filepath.Join(dir, "monitor.json")
	require.NoError(t, os.WriteFile(monitorCfg, []byte(`{"period":"1s","system_metrics":[{"type":"neuron_hw_counters"}]}`), 0o600))
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer w.Close()
	nm := exec.Command(fakeNeuronMonitor, "-c", monitorCfg, "--fixture", filepath.Join("testdata", "reports", "inf2.json"), "--interval", "20ms", "--exit-after", "3", "--exit-code", "0")
	nm.Stdout = w
	require.NoError(t, nm.Run())
	h.waitForReports(3)
	h.stop()

	for i, name := range []string{"inf2-1.yaml", "inf2-2.yaml", "inf2-3.yaml"} {
		want, err := golden.ReadMetrics(filepath.Join("internal", "mapping", "testdata", name))
		require.NoError(t, err)
		require.NoError(t, pmetrictest.CompareMetrics(want, h.metrics.AllMetrics()[i],
			pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()), name)
	}
}
