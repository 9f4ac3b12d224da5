package dcgmreceiver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/sharedcomponent"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/nvmlsource"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/nvmltest"
)

func TestNVMLGoldenDGXH100WithMIG(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{Model: "h100", MIG: map[int][]string{0: {"3g.40gb", "1g.10gb"}}})
	require.NoError(t, err)
	insts := f.MIG(0)
	f.UpdateMIG(0, insts[0].GI, func(r *nvmltest.Readings) {
		r.Compute = []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 6 << 30, GpuInstanceId: uint32(insts[0].GI), ComputeInstanceId: 0}}
	})
	f.Update(3, func(r *nvmltest.Readings) {
		r.MPS = []nvml.ProcessInfo{{Pid: 5001, UsedGpuMemory: 2 << 30, GpuInstanceId: 0xFFFFFFFF}, {Pid: 5002, UsedGpuMemory: 1 << 30, GpuInstanceId: 0xFFFFFFFF}}
	})
	h := start(t, manualConfig(), testWorld(t, f))
	h.waitNVML(t)
	h.scrape(t) // GPM: the first sample
	compareMetricsGolden(t, "nvml-dgxh100-mig.yaml", h.scrape(t))
}

func TestNVMLGoldenDGXA100WithMIG(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{Model: "a100", MIG: map[int][]string{7: {"3g.20gb", "2g.10gb", "1g.5gb"}}})
	require.NoError(t, err)
	f.Update(2, func(r *nvmltest.Readings) {
		// As a pre-Ampere GPU would report (the A100 mock stands in).
		r.PageRetirement = true
		r.RetiredSBE, r.RetiredDBE = 3, 1
		r.RowsCorrectable = 2
	})
	h := start(t, manualConfig(), testWorld(t, f))
	h.waitNVML(t)
	h.scrape(t)
	compareMetricsGolden(t, "nvml-dgxa100-mig.yaml", h.scrape(t))
}

func serveText(t testing.TB, text func() []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(text())
	}))
	t.Cleanup(srv.Close)
	return srv
}

func exporterConfig(endpoint string) *Config {
	cfg := manualConfig()
	cfg.Source = SourceDCGMExporter
	cfg.Endpoint = endpoint
	return cfg
}

func TestExporterGolden(t *testing.T) {
	for _, name := range []string{"dcgm-exporter-2.x.txt", "dcgm-exporter-3.x.txt", "dcgm-exporter-4.x-8xh100.txt"} {
		t.Run(name, func(t *testing.T) {
			body := fixture(t, name)
			srv := serveText(t, func() []byte { return body })
			// The endpoint may be given without /metrics.
			h := start(t, exporterConfig(srv.URL), testWorld(t, nil))
			compareMetricsGolden(t, strings.TrimSuffix(name, ".txt")+".yaml", h.scrape(t))
		})
	}
}

// The 2.x fixture has one value dcgm-exporter could not read: a warning
// names the line, and the rest of the scrape is kept.
func TestExporterSkippedLineIsWarnedOnce(t *testing.T) {
	body := fixture(t, "dcgm-exporter-2.x.txt")
	srv := serveText(t, func() []byte { return body })
	h := start(t, exporterConfig(srv.URL+"/metrics"), testWorld(t, nil))
	for range 3 {
		assert.Equal(t, 2, h.scrape(t).ResourceMetrics().Len())
	}
	warnings := h.logged.FilterMessageSnippet("skipped dcgm-exporter lines").All()
	require.Len(t, warnings, 1, "rate-limited")
	first, ok := warnings[0].ContextMap()["first_errors"].([]any)
	require.True(t, ok)
	require.Len(t, first, 1)
	assert.Contains(t, first[0], `line 12, column 183: dcgm-exporter could not read the field ("ERROR - FAILED TO CONVERT TO STRING"): "DCGM_FI_DEV_MEMORY_TEMP{gpu=\"1\", uuid=`)
}

func TestExporterXIDChangeIsAnEvent(t *testing.T) {
	var xid atomic.Value
	xid.Store("0")
	base := string(fixture(t, "dcgm-exporter-3.x.txt"))
	gpu1 := `DCGM_FI_DEV_XID_ERRORS{gpu="1",UUID="GPU-a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",pci_bus_id="00000000:0F:00.0",device="nvidia1",modelName="NVIDIA A100-SXM4-40GB",Hostname="gpu-node-a1",DCGM_FI_DRIVER_VERSION="535.129.03"} `
	require.Contains(t, base, gpu1+"0")
	srv := serveText(t, func() []byte { return []byte(strings.Replace(base, gpu1+"0", gpu1+xid.Load().(string), 1)) })
	h := start(t, exporterConfig(srv.URL), testWorld(t, nil))

	h.scrape(t)
	assert.Zero(t, h.logs.LogRecordCount(), "no XID yet")
	xid.Store("48")
	md := h.scrape(t)
	require.Equal(t, 1, h.logs.LogRecordCount())
	h.scrape(t)
	require.Equal(t, 1, h.logs.LogRecordCount(), "the same last XID is not a new event")
	compareLogsGolden(t, "dcgm-exporter-xid48.yaml", h.allLogs())

	status, errs := deviceMetrics(t, md, "GPU-a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d")
	assert.Equal(t, accelschema.HWStateFailed, status, "XID 48 leaves the GPU failed until it is drained and reset")
	assert.Equal(t, map[int64]int64{48: 1}, errs)
}

// deviceMetrics returns the hw.state whose hw.status is 1 and the
// hw.errors{error.type=xid} counts of one resource.
func deviceMetrics(t *testing.T, md pmetric.Metrics, hwID string) (string, map[int64]int64) {
	t.Helper()
	state, xids := "", map[int64]int64{}
	found := false
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		if id, ok := rm.Resource().Attributes().Get(accelschema.AttrHWID); !ok || id.Str() != hwID {
			continue
		}
		found = true
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			switch m.Name() {
			case accelschema.MetricStatus:
				for k := 0; k < m.Sum().DataPoints().Len(); k++ {
					dp := m.Sum().DataPoints().At(k)
					if dp.IntValue() == 1 {
						v, _ := dp.Attributes().Get(accelschema.AttrHWState)
						state = v.Str()
					}
				}
			case accelschema.MetricErrors:
				for k := 0; k < m.Sum().DataPoints().Len(); k++ {
					dp := m.Sum().DataPoints().At(k)
					if x, ok := dp.Attributes().Get(accelschema.AttrXID); ok {
						xids[x.Int()] = dp.IntValue()
					}
				}
			}
		}
	}
	require.True(t, found, "no resource %s", hwID)
	return state, xids
}

func TestNVMLHealthEvents(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{Model: "h100", MIG: map[int][]string{4: {"4g.40gb"}}})
	require.NoError(t, err)
	h := start(t, manualConfig(), testWorld(t, f))
	h.waitNVML(t)
	h.scrape(t)
	require.Zero(t, h.logs.LogRecordCount(), "healthy fleet, no events")

	// Asynchronous XIDs go out as they arrive.
	f.InjectXID(2, 79, -1)
	require.Eventually(t, func() bool { return h.logs.LogRecordCount() == 1 }, 10*time.Second, time.Millisecond)
	f.InjectXID(4, 31, f.MIG(4)[0].GI)
	require.Eventually(t, func() bool { return h.logs.LogRecordCount() == 2 }, 10*time.Second, time.Millisecond)

	// Polled conditions go out with the scrape that sees them.
	f.Update(5, func(r *nvmltest.Readings) { r.RemapPending = true; r.RowsUncorrectable = 1 })
	f.Update(6, func(r *nvmltest.Readings) { r.ECCUncorrected = 2 })
	f.Update(2, func(r *nvmltest.Readings) { r.Lost = true })
	md := h.scrape(t)
	require.Equal(t, 5, h.logs.LogRecordCount())
	compareLogsGolden(t, "nvml-health-events.yaml", h.allLogs())

	for _, c := range []struct {
		hwID, state string
		xids        map[int64]int64
	}{
		{nvmltest.UUID(2), accelschema.HWStateFailed, map[int64]int64{79: 1}},
		// The XID NVML attributed to GPU 4's MIG instance counts on GPU 4:
		// hw.status and hw.errors are the physical GPU's alone.
		{nvmltest.UUID(4), accelschema.HWStateOK, map[int64]int64{31: 1}},
		{f.MIG(4)[0].UUID, "", map[int64]int64{}},
		{nvmltest.UUID(5), accelschema.HWStateDegraded, map[int64]int64{}},
		{nvmltest.UUID(6), accelschema.HWStateDegraded, map[int64]int64{}},
		{nvmltest.UUID(7), accelschema.HWStateOK, map[int64]int64{}},
	} {
		state, xids := deviceMetrics(t, md, c.hwID)
		assert.Equal(t, c.state, state, c.hwID)
		assert.Equal(t, c.xids, xids, c.hwID)
	}
	// The lost GPU still has its resource, with its status and nothing else.
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		if id, _ := rm.Resource().Attributes().Get(accelschema.AttrHWID); id.Str() == nvmltest.UUID(2) {
			var names []string
			for j := 0; j < rm.ScopeMetrics().At(0).Metrics().Len(); j++ {
				names = append(names, rm.ScopeMetrics().At(0).Metrics().At(j).Name())
			}
			assert.ElementsMatch(t, []string{accelschema.MetricErrors, accelschema.MetricStatus}, names)
		}
	}

	// Still in the same state at the next scrape: nothing new is announced.
	h.scrape(t)
	assert.Equal(t, 5, h.logs.LogRecordCount())
}

// The node agent runs source: nvml on machines without GPUs (CI): it must
// start, say once what is missing, and keep running quietly.
func TestMissingDriverLibraryOneMessage(t *testing.T) {
	w := testWorld(t, nil)
	w.nvml = openNVML // the real loader, pointed at a library that is not there
	cfg := createDefaultConfig()
	cfg.LibraryPath = "/nonexistent/libnvidia-ml.so.1"
	cfg.CollectionInterval = 5 * time.Millisecond
	cfg.InitialDelay = 0
	h := start(t, cfg, w)
	require.Eventually(t, func() bool {
		return len(h.metrics.AllMetrics()) >= 5 && h.logged.FilterMessage("NVML not available yet; retrying").Len() >= 5
	}, 10*time.Second, time.Millisecond)
	assert.Zero(t, h.metrics.DataPointCount(), "empty scrapes")

	msgs := h.logged.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, msgs, 1)
	assert.Equal(t, "NVIDIA driver library libnvidia-ml.so.1 not found: mount the driver's libraries into the container or use source: dcgm_exporter", msgs[0].Message)
	assert.Equal(t, nvmlsource.LibraryNotFoundMessage, msgs[0].Message)
	assert.Zero(t, h.logged.FilterLevelExact(zapcore.ErrorLevel).Len())

	statuses := h.host.statuses()
	require.Len(t, statuses, 1)
	assert.Equal(t, componentstatus.StatusRecoverableError, statuses[0].Status())
	assert.EqualError(t, statuses[0].Err(), nvmlsource.LibraryNotFoundMessage)
}

// An exporter that is down at start is retried with backoff; when it comes
// up, data flows and the status turns OK.
func TestExporterUnreachableThenRecovers(t *testing.T) {
	var up atomic.Bool
	body := fixture(t, "dcgm-exporter-4.x-8xh100.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			// Drop the connection, as a dead exporter's port would.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	cfg := exporterConfig(srv.URL + "/metrics")
	cfg.CollectionInterval = 5 * time.Millisecond
	cfg.InitialDelay = 0
	h := start(t, cfg, testWorld(t, nil))

	require.Eventually(t, func() bool {
		return len(h.metrics.AllMetrics()) >= 5 && h.logged.FilterMessageSnippet("is not reachable").Len() >= 3
	}, 10*time.Second, time.Millisecond)
	warnings := h.logged.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warnings, 1, "one warning, retries at debug")
	assert.Contains(t, warnings[0].Message, "dcgm-exporter at "+srv.URL+"/metrics is not reachable")
	assert.Zero(t, h.metrics.DataPointCount())

	up.Store(true)
	require.Eventually(t, func() bool { return h.metrics.DataPointCount() > 0 }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool {
		st := h.host.statuses()
		return len(st) == 2 && st[1].Status() == componentstatus.StatusOK
	}, 10*time.Second, time.Millisecond)
	assert.Equal(t, componentstatus.StatusRecoverableError, h.host.statuses()[0].Status())
	assert.Equal(t, 1, h.logged.FilterMessage("dcgm-exporter is reachable again").Len())
}

func TestExporterRejectsBadTLSConfigAtStart(t *testing.T) {
	cfg := exporterConfig("https://localhost:9400/metrics")
	cfg.TLS.CAFile = filepath.Join(t.TempDir(), "missing-ca.pem")
	f := newFactory(testWorld(t, nil))
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, nil)
	require.NoError(t, err)
	err = r.Start(context.Background(), newStatusHost())
	require.ErrorContains(t, err, "missing-ca.pem")
	require.NoError(t, r.Shutdown(context.Background()))
}

func TestMPSDaemonMetricsAndStopEvent(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "control"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "servers"), []byte("8123\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "default_active_thread_percentage"), []byte("25.0\n"), 0o600))
	client, err := filepath.Abs(filepath.Join("testdata", "mps", "fake-nvidia-cuda-mps-control"))
	require.NoError(t, err)

	body := fixture(t, "dcgm-exporter-3.x.txt")
	srv := serveText(t, func() []byte { return body })
	cfg := exporterConfig(srv.URL)
	cfg.MPS.PipeDirectory = dir
	cfg.MPS.ControlCommand = client
	h := start(t, cfg, testWorld(t, nil))

	md := h.scrape(t)
	node := nodeMetrics(t, md)
	assert.Equal(t, map[string]float64{
		accelschema.MetricMPSDaemonUp: 1, accelschema.MetricMPSServers: 1, accelschema.MetricMPSActiveThreads: 0.25,
	}, node)

	require.NoError(t, os.Remove(filepath.Join(dir, "control")))
	md = h.scrape(t)
	assert.Equal(t, map[string]float64{accelschema.MetricMPSDaemonUp: 0}, nodeMetrics(t, md))
	require.Equal(t, 1, h.logs.LogRecordCount())
	compareLogsGolden(t, "mps-daemon-down.yaml", h.allLogs())
	h.scrape(t)
	assert.Equal(t, 1, h.logs.LogRecordCount(), "announced once")
}

// nodeMetrics returns the values on the resource without hw.id.
func nodeMetrics(t *testing.T, md pmetric.Metrics) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		if _, ok := rm.Resource().Attributes().Get(accelschema.AttrHWID); ok {
			continue
		}
		host, _ := rm.Resource().Attributes().Get(accelschema.AttrHostName)
		assert.Equal(t, "gpu-node-1", host.Str())
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			dp := ms.At(j).Gauge().DataPoints().At(0)
			if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
				out[ms.At(j).Name()] = float64(dp.IntValue())
			} else {
				out[ms.At(j).Name()] = dp.DoubleValue()
			}
		}
	}
	return out
}

func TestMetricsAndResourceAttributesCanBeDisabled(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{})
	require.NoError(t, err)
	cfg := manualConfig()
	cfg.Metrics.HwGpuUtilization.Enabled = false
	cfg.Metrics.AcceleratorProcessMemoryUsage.Enabled = false
	cfg.Metrics.AcceleratorProcessUtilization.Enabled = false
	cfg.ResourceAttributes.AcceleratorPciBusID.Enabled = false
	h := start(t, cfg, testWorld(t, f))
	h.waitNVML(t)
	md := h.scrape(t)
	require.Equal(t, 8, md.ResourceMetrics().Len())
	rm := md.ResourceMetrics().At(0)
	_, hasBus := rm.Resource().Attributes().Get(accelschema.AttrPCIBusID)
	assert.False(t, hasBus)
	ms := rm.ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		assert.NotContains(t, []string{accelschema.MetricGPUUtilization, accelschema.MetricProcessMemoryUsage, accelschema.MetricProcessUtilization}, ms.At(i).Name())
	}
}

// Scrapes driven by the collector's scrape controller reach the metrics
// pipeline.
func TestControllerDeliversMetrics(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{})
	require.NoError(t, err)
	cfg := createDefaultConfig()
	cfg.CollectionInterval = 5 * time.Millisecond
	cfg.InitialDelay = 0
	h := start(t, cfg, testWorld(t, f))
	require.Eventually(t, func() bool {
		for _, md := range h.metrics.AllMetrics() {
			if md.ResourceMetrics().Len() == 8 {
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond)
}

// A logs-only pipeline still scrapes (for health) and emits events.
func TestLogsOnlyPipeline(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{})
	require.NoError(t, err)
	fac := newFactory(testWorld(t, f))
	sink := &logsCounter{}
	lr, err := fac.CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), manualConfig(), sink)
	require.NoError(t, err)
	require.NoError(t, lr.Start(context.Background(), newStatusHost()))
	defer func() { require.NoError(t, lr.Shutdown(context.Background())) }()
	r := lr.(*sharedcomponent.Component[*dcgmReceiver]).Unwrap()
	require.Eventually(t, func() bool { return r.src.(interface{ Ready() bool }).Ready() }, 10*time.Second, time.Millisecond)
	f.Update(1, func(r *nvmltest.Readings) { r.RemapFailed = true })
	_, err = r.scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(1), sink.n.Load())
	require.NoError(t, r.forwardMetrics(context.Background(), pmetric.NewMetrics()), "no metrics pipeline: dropped")
}

type logsCounter struct{ n atomic.Int64 }

func (c *logsCounter) ConsumeLogs(_ context.Context, l plog.Logs) error {
	c.n.Add(int64(l.LogRecordCount()))
	return nil
}

func (*logsCounter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }
