package memstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// one GPU with one waste counter and one utilization point at t.
func gpu(t time.Time, waste, util float64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(s.AttrHWID, "GPU-1")
	rm.Resource().Attributes().PutStr(s.AttrK8sNodeName, "n1")
	sm := rm.ScopeMetrics().AppendEmpty()
	m := sm.Metrics().AppendEmpty()
	m.SetName(s.MetricWaste)
	sum := m.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	p := sum.DataPoints().AppendEmpty()
	p.SetTimestamp(pcommon.NewTimestampFromTime(t))
	p.SetDoubleValue(waste)
	p.Attributes().PutStr(s.AttrWasteReason, s.WasteIdle)
	g := sm.Metrics().AppendEmpty()
	g.SetName(s.MetricGPUUtilization)
	gp := g.SetEmptyGauge().DataPoints().AppendEmpty()
	gp.SetTimestamp(pcommon.NewTimestampFromTime(t))
	gp.SetDoubleValue(util)
	return md
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newStore(cfg Config) (*Store, *fakeClock) {
	c := &fakeClock{t: fixture.Now}
	st := New(cfg)
	st.SetClock(c.now)
	return st, c
}

func only(t *testing.T, snap *fleet.Snapshot) fleet.Resource {
	t.Helper()
	require.Len(t, snap.Resources, 1)
	return snap.Resources[0]
}

// Waste per hour is the counter's rate over the window; a reset (the
// agent restarted) counts from zero, as Prometheus's rate() does.
func TestWasteRateAcrossAReset(t *testing.T) {
	st, clock := newStore(Config{Retention: time.Hour, PointsPerSeries: 120, Expiry: time.Hour, RateWindow: 5 * time.Minute})
	t0 := fixture.Now
	// $2/h: 2/60 USD a minute; the counter restarts from 0 after the
	// third sample (so the fourth reads one minute's worth).
	for i, v := range []float64{10, 10 + 2.0/60, 10 + 4.0/60, 2.0 / 60, 4.0 / 60} {
		clock.t = t0.Add(time.Duration(i) * time.Minute)
		st.Consume(gpu(clock.t, v, 0.5))
	}
	r := only(t, st.Snapshot())
	require.InDelta(t, 2.0, r.WastePerHour[s.WasteIdle], 1e-9)
	require.InDelta(t, 0.5, *r.Utilization, 1e-6)

	// Samples older than the window no longer count; one sample is no rate.
	clock.t = t0.Add(20 * time.Minute)
	st.Consume(gpu(clock.t, 1, 0.5))
	r = only(t, st.Snapshot())
	_, ok := r.WastePerHour[s.WasteIdle]
	require.False(t, ok, "one sample in the window gives no rate: %v", r.WastePerHour)
}

// A chart keeps at most points_per_series points, one per step (a newer
// sample in the same step replaces the older).
func TestChartRingIsBounded(t *testing.T) {
	st, clock := newStore(Config{Retention: 10 * time.Minute, PointsPerSeries: 10, Expiry: time.Hour, RateWindow: time.Minute})
	for i := 0; i < 100; i++ {
		clock.t = fixture.Now.Add(time.Duration(i) * 30 * time.Second) // two samples per 60 s step
		st.Consume(gpu(clock.t, float64(i), float64(i)/100))
	}
	series := st.Series([]fleet.SeriesRef{{Node: "n1", HWID: "GPU-1"}}, 24*time.Hour)
	require.Len(t, series, 1)
	pts := series[0].Points
	require.Len(t, pts, 10)
	require.InDelta(t, 0.99, pts[9][1], 1e-6, "the last sample of the last step")
	for i := 1; i < len(pts); i++ {
		require.Equal(t, 60.0, pts[i][0]-pts[i-1][0], "one point per step")
	}
}

// What is not seen for the expiry leaves the model.
func TestExpiry(t *testing.T) {
	st, clock := newStore(Config{Retention: time.Hour, PointsPerSeries: 10, Expiry: 10 * time.Minute, RateWindow: time.Minute})
	st.Consume(fixture.Metrics(clock.t))
	n := st.Len()
	require.Positive(t, n)
	clock.t = clock.t.Add(5 * time.Minute)
	st.Consume(gpu(clock.t, 1, 1)) // another GPU keeps reporting
	require.Equal(t, n+1, st.Len())
	clock.t = clock.t.Add(6 * time.Minute)
	st.Consume(gpu(clock.t, 2, 1))
	require.Equal(t, 1, st.Len(), "only the GPU seen within 10 minutes is left")
	snap := st.Snapshot()
	require.Empty(t, snap.Servers)
	require.Empty(t, snap.MPS)
}

// The fixture's per-process point on GPU-A0 does not replace the GPU's own
// utilization; on a NeuronCore (per-runtime points only) they stand for it.
func TestOwnPointsWinOverProcesses(t *testing.T) {
	st, _ := newStore(Config{Retention: time.Hour, PointsPerSeries: 10, Expiry: time.Hour, RateWindow: time.Minute})
	st.Consume(fixture.Metrics(fixture.Now))
	got := map[string]float64{}
	for _, r := range st.Snapshot().Resources {
		if r.Utilization != nil && r.Pod != "" {
			got[r.HWID] = *r.Utilization
		}
	}
	require.InDelta(t, 0.8, got["GPU-A0"], 1e-6)
	require.InDelta(t, 0.9, got["neuron_device_0/neuroncore_0"], 1e-6)
	require.InDelta(t, 0.2, got["neuron_device_0/neuroncore_1"], 1e-6, "two runtimes add up")
}
