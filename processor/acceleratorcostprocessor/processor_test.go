package acceleratorcostprocessor

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/metadata"
)

func TestOneInstancePerIDAcrossPipelines(t *testing.T) {
	f := NewFactory()
	cfg := testConfig()
	set := processortest.NewNopSettings(metadata.Type)
	set.ID = component.NewIDWithName(metadata.Type, "shared")
	m, err := f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	l, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	a, _ := instances.LoadOrStore(set.ID, func() (*costProcessor, error) { panic("created twice") })

	other := processortest.NewNopSettings(metadata.Type)
	other.ID = component.NewIDWithName(metadata.Type, "other")
	_, err = f.CreateMetrics(context.Background(), other, cfg, consumertest.NewNop())
	require.NoError(t, err)
	b, _ := instances.LoadOrStore(other.ID, func() (*costProcessor, error) { panic("created twice") })
	require.NotSame(t, a.Unwrap(), b.Unwrap())
	require.Len(t, a.Unwrap().logs, 1, "the logs pipeline's next consumer receives findings")

	host := componenttest.NewNopHost()
	require.NoError(t, m.Start(context.Background(), host))
	require.NoError(t, l.Start(context.Background(), host))
	require.NoError(t, m.Shutdown(context.Background()))
	require.NoError(t, l.Shutdown(context.Background()))
	require.NoError(t, b.Shutdown(context.Background()))
}

func TestPricingFileReloadsWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.csv")
	write := func(price string) { // atomically, as a ConfigMap update is
		tmp := path + ".tmp"
		require.NoError(t, os.WriteFile(tmp, []byte("instance_type,price_per_hour,accelerator_count,accelerator_model\nlab.gpu,"+price+",8,A100\n"), 0o600))
		require.NoError(t, os.Rename(tmp, path))
	}
	write("8")
	cfg := testConfig()
	cfg.Pricing.Files = []string{path}
	cfg.Pricing.ReloadInterval = 10 * time.Millisecond
	h := newHarness(t, cfg)
	r := gpu("GPU-lab", s.AttrHostType, "lab.gpu", s.MetricGREngineActive, 0.5)
	price := func() float64 { return costOf(h.send(at(0), r), "GPU-lab", "").price }
	require.Equal(t, 1.0, price())

	write("16")
	require.Eventually(t, func() bool { return price() == 2 }, 5*time.Second, 10*time.Millisecond, "the new price is used")

	write("-16")
	require.Eventually(t, func() bool {
		return h.logged.FilterMessageSnippet("pricing file rejected").Len() == 1
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, 2.0, price(), "a broken file keeps the last good table")
	msg := h.logged.FilterMessageSnippet("pricing file rejected").All()[0]
	require.Contains(t, msg.ContextMap()["error"], path+":2: price_per_hour \"-16\" is negative")
}

func TestStateIsBoundedByTTL(t *testing.T) {
	cfg := testConfig()
	cfg.StateTTL = 10 * time.Minute
	h := newHarness(t, cfg)
	var rs []resource
	for _, id := range []string{"a", "b", "c", "d"} {
		rs = append(rs, gpu("GPU-"+id, held("w"+id, s.WorkloadInference, s.MetricGREngineActive, 0.5)...),
			res(s.AttrK8sPodUID, "uid-w"+id, s.MetricKVCacheUtilization, 0.5))
	}
	h.send(at(0), rs...)
	h.send(at(step), rs...)
	require.Len(t, h.proc.resources, 4)
	require.Len(t, h.proc.pods, 4) // the serving resources carry only the pod UID

	// Eleven minutes later only GPU-a reports: the rest is forgotten.
	h.clock = h.clock.Add(11 * time.Minute)
	out := h.send(at(11*time.Minute), rs[0])
	require.Len(t, h.proc.resources, 1)
	require.Empty(t, h.proc.pods)
	require.Len(t, h.proc.workloads, 1)
	got := costOf(out, "GPU-a", "")
	// GPU-a was seen 11 min ago (wall) too: its series starts again.
	require.Equal(t, at(11*time.Minute), got.start)
	require.Zero(t, got.cost)
}

// Malformed or odd input never fails the batch and never produces a NaN.
func TestOddInputIsSurvived(t *testing.T) {
	h := newHarness(t, testConfig())
	md := batch(at(0),
		gpu("GPU-nan", s.MetricGREngineActive, math.NaN(), s.MetricGPUMemoryUsage, -5.0, s.MetricGPUMemoryLimit, 0.0),
		gpu("GPU-share", s.AttrPartitionShare, "half", s.MetricGREngineActive, 7.0),
		gpu("GPU-big-share", s.AttrPartitionShare, 5.0, s.MetricPower, 300.0),
		res(s.AttrHWID, ""),
		res(s.AttrK8sPodUID, "uid-x", s.MetricRequestsWaiting, math.Inf(1)),
	)
	// A metric with no points, an empty point, and a histogram.
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	ms.AppendEmpty().SetName(s.MetricSMActive)
	ms.At(ms.Len() - 1).SetEmptyGauge()
	e := ms.AppendEmpty()
	e.SetName(s.MetricTensorActive)
	e.SetEmptyGauge().DataPoints().AppendEmpty().SetTimestamp(at(0))
	hist := ms.AppendEmpty()
	hist.SetName(s.MetricTimeToFirstToken)
	hist.SetEmptyHistogram().DataPoints().AppendEmpty().SetTimestamp(at(0))
	require.NoError(t, h.metrics.ConsumeMetrics(context.Background(), md))

	md2 := pmetric.NewMetrics()
	batch(at(step),
		gpu("GPU-nan", s.MetricGREngineActive, math.NaN()),
		gpu("GPU-share", s.AttrPartitionShare, "half", s.MetricGREngineActive, 7.0),
		gpu("GPU-big-share", s.AttrPartitionShare, 5.0, s.MetricPower, 300.0),
	).CopyTo(md2)
	require.NoError(t, h.metrics.ConsumeMetrics(context.Background(), md2))
	out := h.msink.AllMetrics()[1]
	for _, id := range []string{"GPU-nan", "GPU-share", "GPU-big-share"} {
		got := costOf(out, id, "")
		require.True(t, got.found, id)
		require.InDelta(t, 0.01, got.cost, 1e-12, "%s: an unusable share counts as the whole device", id)
		for r, v := range got.waste {
			require.False(t, math.IsNaN(v), "%s waste %s is NaN", id, r)
		}
	}
	// Activity 7 is clamped to 1: busy, not idle.
	require.Zero(t, costOf(out, "GPU-share", "").totalWaste())
}

// The metrics and logs sides share state; run them together (go test -race).
func TestConcurrentMetricsAndLogs(t *testing.T) {
	h := newHarness(t, testConfig())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 50; i++ {
			require.NoError(t, h.logs.ConsumeLogs(context.Background(),
				healthEvent("GPU-c", at(time.Duration(i)*time.Second), 79, s.HWStateFailed, s.ActionRebootNode)))
		}
	}()
	for i := 0; i < 50; i++ {
		md := batch(at(time.Duration(i)*time.Second), gpu("GPU-c", s.MetricGREngineActive, 0.5),
			migInstance("GPU-m", "1", "3g.40gb", 0.5, s.MetricGREngineActive, 0.5))
		require.NoError(t, h.metrics.ConsumeMetrics(context.Background(), md))
	}
	<-done
	require.Len(t, h.msink.AllMetrics(), 50)
}
