package promstore

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/distributions/otelcol-accel/dashboards/promschema"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// The error queries read what the gateway emits.
func TestErrorQueriesReadEmittedSeries(t *testing.T) {
	c, err := promschema.NewChecker()
	require.NoError(t, err)
	for _, q := range []string{errorCounts + " > 0", grewIn(errorCounts, "5m")} {
		require.Empty(t, c.Check(q), q)
	}
}

func gpuLabels(extra ...string) map[string]string {
	l := map[string]string{label(s.AttrHWID): "GPU-1", label(s.AttrK8sNodeName): "n1"}
	for i := 0; i+1 < len(extra); i += 2 {
		l[label(extra[i])] = extra[i+1]
	}
	return l
}

func xidSample(code int) sample {
	return sample{labels: gpuLabels(s.AttrErrorType, s.ErrorXID, s.AttrXID, strconv.Itoa(code)), value: 1}
}

// The Prometheus backend names a failed device's action from its XID
// counters as the memory backend does (issue 35): the most severe class
// that grew in the window, else the most severe it ever counted; the
// health event's action wins once it arrives.
func TestFailedDeviceShowsItsXIDsActionBeforeTheHealthEvent(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	window := 5 * time.Minute
	b := newBuilder()
	b.status([]sample{{labels: gpuLabels(s.AttrHWState, s.HWStateFailed), value: 1}})
	// XID 79 (fallen off the bus) counted long ago; 63 (degraded) and 48
	// (failed) grew in the window: 48, the most severe that grew, is why.
	b.errors(false, time.Time{})([]sample{xidSample(79), xidSample(63), xidSample(48)})
	b.errors(true, now.Add(-window))([]sample{xidSample(63), xidSample(48)})
	snap := b.snapshot(now)

	d, _, ok := fleet.NewView(snap, nil, 0.1).Device("GPU-1", "n1")
	require.True(t, ok)
	require.NotNil(t, d.Device.Action, "no action for a failed GPU whose XID is known")
	require.Equal(t, xid.Lookup(48).Action, *d.Device.Action)

	failed, reboot, code := s.HWStateFailed, s.ActionRebootNode, int64(48)
	ev := fleet.Event{Time: now.Add(-time.Minute), Name: s.EventXID, DeviceID: "GPU-1", Node: "n1", State: &failed, Action: &reboot, XID: &code}
	r := fleet.NewView(snap, &fleet.Logs{Events: []fleet.Event{ev}}, 0.1).Reliability(fleet.Filter{}, time.Hour)
	require.Len(t, r.DevicesNotOK, 1)
	require.Equal(t, s.ActionRebootNode, *r.DevicesNotOK[0].Action, "the health event's own action wins")

	// Nothing grew in the window: the most severe class ever counted.
	b = newBuilder()
	b.status([]sample{{labels: gpuLabels(s.AttrHWState, s.HWStateFailed), value: 1}})
	b.errors(false, time.Time{})([]sample{xidSample(63), xidSample(79)})
	b.errors(true, now.Add(-window))(nil)
	d, _, _ = fleet.NewView(b.snapshot(now), nil, 0.1).Device("GPU-1", "n1")
	require.Equal(t, xid.Lookup(79).Action, *d.Device.Action)
}
