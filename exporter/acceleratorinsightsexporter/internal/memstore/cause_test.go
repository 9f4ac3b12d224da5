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
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// statusReport is GPU-1's hw.status in state at t, with its XID counts.
func statusReport(t time.Time, state string, xids map[int]int64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(s.AttrHWID, "GPU-1")
	rm.Resource().Attributes().PutStr(s.AttrK8sNodeName, "n1")
	sm := rm.ScopeMetrics().AppendEmpty()
	st := sm.Metrics().AppendEmpty()
	st.SetName(s.MetricStatus)
	g := st.SetEmptyGauge()
	for _, v := range s.EnumHWState.Values {
		p := g.DataPoints().AppendEmpty()
		p.SetTimestamp(pcommon.NewTimestampFromTime(t))
		p.Attributes().PutStr(s.AttrHWState, v.Value)
		if v.Value == state {
			p.SetIntValue(1)
		}
	}
	if len(xids) == 0 {
		return md
	}
	m := sm.Metrics().AppendEmpty()
	m.SetName(s.MetricErrors)
	sum := m.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for code, n := range xids {
		p := sum.DataPoints().AppendEmpty()
		p.SetTimestamp(pcommon.NewTimestampFromTime(t))
		p.SetIntValue(n)
		p.Attributes().PutStr(s.AttrErrorType, s.ErrorXID)
		p.Attributes().PutInt(s.AttrXID, int64(code))
	}
	return md
}

// actions is what the device and reliability pages say to do about GPU-1.
func actions(t *testing.T, v *fleet.View) (device, reliability string) {
	t.Helper()
	d, _, ok := v.Device("GPU-1", "n1")
	require.True(t, ok)
	require.Equal(t, s.HWStateFailed, d.Device.Health)
	require.NotNil(t, d.Device.Action, "the device page has no action for a failed GPU whose XID is known")
	r := v.Reliability(fleet.Filter{}, time.Hour)
	require.Len(t, r.DevicesNotOK, 1)
	require.NotNil(t, r.DevicesNotOK[0].Action, "the reliability page has no action for a failed GPU whose XID is known")
	return *d.Device.Action, *r.DevicesNotOK[0].Action
}

// The dcgm receiver holds an XID's health event for its de-duplication
// window while hw.status and hw.errors go out at once: for those seconds
// the console names the action of the XID whose count grew (issue 35);
// the event's own action replaces it when it arrives.
func TestFailedDeviceShowsItsXIDsActionBeforeTheHealthEvent(t *testing.T) {
	st, clock := newStore(Config{Retention: time.Hour, PointsPerSeries: 10, Expiry: time.Hour, RateWindow: time.Minute})
	t0 := fixture.Now
	st.Consume(statusReport(t0, s.HWStateOK, map[int]int64{13: 2}))
	clock.t = t0.Add(10 * time.Second)
	st.Consume(statusReport(clock.t, s.HWStateFailed, map[int]int64{13: 2, 48: 1}))
	snap := st.Snapshot()

	want := xid.Lookup(48)
	v := fleet.NewView(snap, nil, 0.1)
	dev, rel := actions(t, v)
	require.Equal(t, want.Action, dev, "device page before the health event")
	require.Equal(t, want.Action, rel, "reliability page before the health event")
	d, _, _ := v.Device("GPU-1", "n1")
	require.Equal(t, want.FailureMode, *d.Device.FailureMode)
	require.Equal(t, fleet.ActionBrief(want.Action), d.Device.ActionDescription)

	// An older event of another failure (before the report that showed
	// XID 48 grow) does not hide the new cause.
	old := event(t0.Add(-time.Hour), 13, s.ActionRestartApp)
	dev, rel = actions(t, v.WithLogs(&fleet.Logs{Events: []fleet.Event{old}}))
	require.Equal(t, want.Action, dev, "device page with only an older event")
	require.Equal(t, want.Action, rel)

	// The event of this failure (stamped with the XID's time, between the
	// two reports) brings its own action, which wins: here NVML's
	// recovery action asked for a node reboot.
	own := event(t0.Add(5*time.Second), 48, s.ActionRebootNode)
	dev, rel = actions(t, v.WithLogs(&fleet.Logs{Events: []fleet.Event{own, old}}))
	require.Equal(t, s.ActionRebootNode, dev, "device page after the health event")
	require.Equal(t, s.ActionRebootNode, rel, "reliability page after the health event")
	// An event that names the XID wins even when its time (from the
	// kernel log) is older than the report before the count grew.
	early := event(t0.Add(-2*time.Second), 48, s.ActionResetGPU)
	dev, _ = actions(t, v.WithLogs(&fleet.Logs{Events: []fleet.Event{early, old}}))
	require.Equal(t, s.ActionResetGPU, dev, "device page after the XID's own event, stamped before the last report")

	// Ok again: no cause; failed again with no count that grew since:
	// nothing names an action until an event does.
	clock.t = t0.Add(20 * time.Second)
	st.Consume(statusReport(clock.t, s.HWStateOK, map[int]int64{13: 2, 48: 1}))
	clock.t = t0.Add(30 * time.Second)
	st.Consume(statusReport(clock.t, s.HWStateFailed, map[int]int64{13: 2, 48: 1}))
	d, _, _ = fleet.NewView(st.Snapshot(), nil, 0.1).Device("GPU-1", "n1")
	require.Nil(t, d.Device.Action, "a cause from a count that did not grow since the device was ok")
}

func event(at time.Time, code int64, action string) fleet.Event {
	failed := s.HWStateFailed
	return fleet.Event{Time: at, Name: s.EventXID, DeviceID: "GPU-1", Node: "n1", State: &failed, Action: &action, XID: &code}
}
