package health

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func gpu(id string) model.Identity {
	return model.Identity{HWID: id, Index: 0, PartitionType: accelschema.PartitionNone, Share: 1, GPUInstanceID: -1, ComputeInstanceID: -1}
}

func snap(at time.Time, samples ...model.Sample) *model.Snapshot {
	return &model.Snapshot{Time: at, Samples: samples}
}

func healthy(id model.Identity) model.Sample {
	s := model.Sample{Identity: id}
	s.Errors[model.ErrECCUncorrected] = model.Of(0)
	s.RemapPending, s.RemapFailed, s.RetirementPending = model.Of(0), model.Of(0), model.Of(0)
	return s
}

func names(recs []Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.EventName)
	}
	return out
}

func TestHealthyDeviceIsOKAndQuiet(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	id := gpu("GPU-a")
	assert.Empty(t, tr.Observe(snap(t0, healthy(id))))
	assert.Equal(t, accelschema.HWStateOK, tr.State(id, t0))
	assert.Nil(t, tr.XIDCounts("GPU-a"))
}

func TestConditionsAnnouncedOnceWhenTheyAppear(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	id := gpu("GPU-a")
	tr.Observe(snap(t0, healthy(id)))

	s := healthy(id)
	s.RemapPending = model.Of(1)
	recs := tr.Observe(snap(t0.Add(time.Minute), s))
	require.Len(t, recs, 1)
	assert.Equal(t, accelschema.EventRowRemap, recs[0].EventName)
	assert.Equal(t, accelschema.HWStateDegraded, recs[0].Class.State)
	assert.Equal(t, accelschema.ActionDrainAndReset, recs[0].Class.Action)
	assert.Contains(t, recs[0].Message, "Row remap pending on GPU-a")
	assert.Equal(t, accelschema.HWStateDegraded, tr.State(id, t0.Add(time.Minute)))

	// Still pending: no second event.
	assert.Empty(t, tr.Observe(snap(t0.Add(2*time.Minute), s)))

	// Failed as well: predicted_failure is worse than degraded.
	s.RemapFailed = model.Of(1)
	recs = tr.Observe(snap(t0.Add(3*time.Minute), s))
	require.Len(t, recs, 1)
	assert.Equal(t, accelschema.ActionReplaceDevice, recs[0].Class.Action)
	assert.Equal(t, accelschema.HWStatePredictedFailure, tr.State(id, t0.Add(3*time.Minute)))

	// Reset: both clear, the device is ok again; a new pending is announced again.
	tr.Observe(snap(t0.Add(4*time.Minute), healthy(id)))
	assert.Equal(t, accelschema.HWStateOK, tr.State(id, t0.Add(4*time.Minute)))
	s = healthy(id)
	s.RemapPending = model.Of(1)
	assert.Len(t, tr.Observe(snap(t0.Add(5*time.Minute), s)), 1)
}

func TestConditionPresentAtFirstSightIsAnnounced(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	s := healthy(gpu("GPU-a"))
	s.RetirementPending = model.Of(1)
	recs := tr.Observe(snap(t0, s))
	require.Len(t, recs, 1)
	assert.Equal(t, accelschema.EventRowRemap, recs[0].EventName)
	assert.Contains(t, recs[0].Message, "Page retirement pending")
}

func TestUncorrectedECCAnnouncedOnEveryIncrease(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	id := gpu("GPU-a")
	s := healthy(id)
	tr.Observe(snap(t0, s))
	for i, n := range []float64{1, 1, 3} {
		s.Errors[model.ErrECCUncorrected] = model.Of(n)
		recs := tr.Observe(snap(t0.Add(time.Duration(i+1)*time.Minute), s))
		if i == 1 {
			assert.Empty(t, recs, "unchanged count")
			continue
		}
		require.Len(t, recs, 1)
		assert.Equal(t, accelschema.EventECCUncorrected, recs[0].EventName)
		assert.Contains(t, recs[0].Message, "(now")
	}
	assert.Equal(t, accelschema.HWStateDegraded, tr.State(id, t0.Add(5*time.Minute)))
}

func TestLostDeviceKeepsOtherConditions(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	id := gpu("GPU-a")
	s := healthy(id)
	s.RemapPending = model.Of(1)
	tr.Observe(snap(t0, s))
	recs := tr.Observe(snap(t0.Add(time.Minute), model.Sample{Identity: id, Lost: true}))
	require.Equal(t, []string{accelschema.EventDeviceLost}, names(recs))
	assert.Equal(t, accelschema.ActionRebootNode, recs[0].Class.Action)
	assert.Equal(t, accelschema.HWStateFailed, tr.State(id, t0.Add(time.Minute)))
	// The asynchronous "GPU unavailable" event for the same loss is not a
	// second announcement.
	assert.Empty(t, tr.ObserveEvent(model.Event{Device: id, Time: t0.Add(time.Minute), Kind: model.EventDeviceLost}))
}

func TestNVMLXIDEventsAreHeldThenExpire(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	id := gpu("GPU-a")
	tr.Observe(snap(t0, healthy(id)))

	recs := tr.ObserveEvent(model.Event{Device: id, Time: t0, Kind: model.EventXID, Code: 79})
	require.Len(t, recs, 1)
	r := recs[0]
	assert.Equal(t, accelschema.EventXID, r.EventName)
	assert.Equal(t, 79, r.XID)
	assert.Equal(t, accelschema.FailureModeDeviceLost, r.Class.FailureMode)
	assert.Equal(t, accelschema.ActionRebootNode, r.Class.Action)
	assert.Contains(t, r.Message, "XID 79 (GPU has fallen off the bus) on GPU-a")

	// An application XID counts but does not change the state.
	tr.ObserveEvent(model.Event{Device: id, Time: t0, Kind: model.EventXID, Code: 13})
	tr.ObserveEvent(model.Event{Device: id, Time: t0, Kind: model.EventXID, Code: 13})
	assert.Equal(t, []XIDCount{{13, 2}, {79, 1}}, tr.XIDCounts("GPU-a"))

	assert.Equal(t, accelschema.HWStateFailed, tr.State(id, t0.Add(9*time.Minute)))
	assert.Equal(t, accelschema.HWStateOK, tr.State(id, t0.Add(11*time.Minute)), "held for xid_hold, then the conditions decide")
	assert.Equal(t, []XIDCount{{13, 2}, {79, 1}}, tr.XIDCounts("GPU-a"), "counts are cumulative")
}

func TestRecoveryActionNoneClearsHeldXIDs(t *testing.T) {
	tr := New(time.Hour, 2*time.Hour)
	id := gpu("GPU-a")
	tr.ObserveEvent(model.Event{Device: id, Time: t0, Kind: model.EventXID, Code: 95})
	assert.Equal(t, accelschema.HWStateFailed, tr.State(id, t0))

	recs := tr.ObserveEvent(model.Event{Device: id, Time: t0, Kind: model.EventRecoveryAction, Code: 4})
	require.Len(t, recs, 1)
	assert.Equal(t, 154, recs[0].XID)
	assert.Equal(t, accelschema.ActionDrainAndReset, recs[0].Class.Action)
	assert.Contains(t, recs[0].Message, `"drain and reset"`)

	recs = tr.ObserveEvent(model.Event{Device: id, Time: t0.Add(time.Minute), Kind: model.EventRecoveryAction, Code: 0})
	require.Len(t, recs, 1)
	assert.Equal(t, accelschema.HWStateOK, recs[0].Class.State)
	assert.Equal(t, accelschema.HWStateOK, tr.State(id, t0.Add(time.Minute)), "the driver says nothing needs doing")
}

func TestExporterLastXIDChanges(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	id := gpu("GPU-a")
	at := func(m int, xid float64) []Record {
		s := healthy(id)
		s.LastXID = model.Of(xid)
		return tr.Observe(snap(t0.Add(time.Duration(m)*time.Minute), s))
	}
	assert.Empty(t, at(0, 48), "the value at first sight is a baseline of unknown age")
	assert.Empty(t, at(1, 48), "unchanged")
	recs := at(2, 63)
	require.Len(t, recs, 1)
	assert.Equal(t, 63, recs[0].XID)
	assert.Empty(t, at(3, 0), "back to zero is no XID")
	recs = at(4, 48)
	require.Len(t, recs, 1)
	assert.Equal(t, accelschema.HWStateFailed, recs[0].Class.State)
	assert.Equal(t, accelschema.HWStateFailed, tr.State(id, t0.Add(4*time.Minute)))
	assert.Equal(t, []XIDCount{{48, 1}, {63, 1}}, tr.XIDCounts("GPU-a"))
}

func TestUnknownXIDIsDegradedAndNamed(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	recs := tr.ObserveEvent(model.Event{Device: gpu("GPU-a"), Time: t0, Kind: model.EventXID, Code: 9999})
	require.Len(t, recs, 1)
	assert.Equal(t, accelschema.HWStateDegraded, recs[0].Class.State)
	assert.Equal(t, accelschema.ActionContactSupport, recs[0].Class.Action)
}

func TestMIGInheritsItsGPUsState(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	parent := gpu("GPU-a")
	inst := model.Identity{HWID: "MIG-1", Parent: "GPU-a", PartitionType: accelschema.PartitionMIG, GPUInstanceID: 1, ComputeInstanceID: 0}
	p := healthy(parent)
	p.RemapFailed = model.Of(1)
	tr.Observe(snap(t0, p, model.Sample{Identity: inst}))
	assert.Equal(t, accelschema.HWStatePredictedFailure, tr.State(inst, t0))
}

// hw.status and hw.errors live on the GPU alone (counted once per physical
// device), so what NVML attributes to a MIG instance counts on its GPU.
func TestGPUCarriesItsMIGInstancesHealth(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	parent, other := gpu("GPU-a"), gpu("GPU-b")
	inst := model.Identity{HWID: "MIG-1", Parent: "GPU-a", PartitionType: accelschema.PartitionMIG, GPUInstanceID: 1, ComputeInstanceID: 0}
	tr.Observe(snap(t0, healthy(parent), healthy(other), model.Sample{Identity: inst}))

	recs := tr.ObserveEvent(model.Event{Device: inst, Time: t0, Kind: model.EventXID, Code: 95})
	require.Len(t, recs, 1)
	assert.Equal(t, "MIG-1", recs[0].Device.HWID, "the event names the instance it happened in")
	tr.ObserveEvent(model.Event{Device: parent, Time: t0, Kind: model.EventXID, Code: 95})
	tr.ObserveEvent(model.Event{Device: parent, Time: t0, Kind: model.EventXID, Code: 13})

	assert.Equal(t, []XIDCount{{13, 1}, {95, 2}}, tr.XIDCounts("GPU-a"), "the GPU's own XIDs and its instance's")
	assert.Equal(t, accelschema.HWStateFailed, tr.State(parent, t0), "XID 95 in an instance leaves its GPU failed")
	assert.Equal(t, accelschema.HWStateOK, tr.State(other, t0))
	assert.Nil(t, tr.XIDCounts("GPU-b"))
}

// A MIG layout changes (an instance's hw.id now names another GPU's
// instance) and instances go away: a GPU counts the instances it has now.
func TestGPUCountsOnlyItsCurrentInstances(t *testing.T) {
	tr := New(10*time.Minute, time.Minute)
	a, b := gpu("GPU-a"), gpu("GPU-b")
	inst := model.Identity{HWID: "MIG-1", Parent: "GPU-a", PartitionType: accelschema.PartitionMIG, GPUInstanceID: 1, ComputeInstanceID: 0}
	tr.Observe(snap(t0, healthy(a), healthy(b), model.Sample{Identity: inst}))
	tr.ObserveEvent(model.Event{Device: inst, Time: t0, Kind: model.EventXID, Code: 95})
	assert.Equal(t, []XIDCount{{95, 1}}, tr.XIDCounts("GPU-a"))
	assert.Equal(t, accelschema.HWStateFailed, tr.State(a, t0))

	moved := inst
	moved.Parent = "GPU-b"
	tr.Observe(snap(t0.Add(time.Second), healthy(a), healthy(b), model.Sample{Identity: moved}))
	assert.Nil(t, tr.XIDCounts("GPU-a"), "no longer GPU-a's instance")
	assert.Equal(t, accelschema.HWStateOK, tr.State(a, t0.Add(time.Second)))
	assert.Equal(t, []XIDCount{{95, 1}}, tr.XIDCounts("GPU-b"))
	assert.Equal(t, accelschema.HWStateFailed, tr.State(b, t0.Add(time.Second)))

	// Two minutes on, only the GPUs are seen: the instance is forgotten.
	later := t0.Add(2 * time.Minute)
	tr.Observe(snap(later, healthy(a), healthy(b)))
	tr.Observe(snap(later.Add(time.Second), healthy(a), healthy(b)))
	assert.Nil(t, tr.XIDCounts("GPU-b"))
	assert.Equal(t, 2, tr.Len())
}

// DCGM_EXP_XID_ERRORS_COUNT counts XIDs in a window: growth is what
// happened since the last scrape, and it sees repeats of one XID.
func TestExporterXIDWindow(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	id := gpu("GPU-a")
	at := func(m int, window ...model.XIDWindowCount) []Record {
		s := healthy(id)
		s.LastXID = model.Of(48) // ignored once the window is reported
		s.XIDWindow = window
		return tr.Observe(snap(t0.Add(time.Duration(m)*time.Minute), s))
	}
	assert.Empty(t, at(0, model.XIDWindowCount{Code: 13, Count: 2}), "the first window is a baseline of unknown age")
	assert.Empty(t, at(1, model.XIDWindowCount{Code: 13, Count: 2}), "unchanged")

	recs := at(2, model.XIDWindowCount{Code: 13, Count: 3}, model.XIDWindowCount{Code: 48, Count: 2})
	require.Len(t, recs, 2, "one event per code that grew")
	assert.Equal(t, 13, recs[0].XID)
	assert.Equal(t, 48, recs[1].XID)
	assert.Contains(t, recs[1].Message, "(2 times since the last scrape)")
	assert.Equal(t, []XIDCount{{13, 1}, {48, 2}}, tr.XIDCounts("GPU-a"))
	assert.Equal(t, accelschema.HWStateFailed, tr.State(id, t0.Add(2*time.Minute)))

	assert.Empty(t, at(3, model.XIDWindowCount{Code: 48, Count: 1}), "XIDs leaving the window are not new ones")
	assert.Empty(t, at(4), "the window emptied; the last XID is not counted again")
	recs = at(5, model.XIDWindowCount{Code: 13, Count: 1})
	require.Len(t, recs, 1, "13 entered the emptied window again")
	assert.Equal(t, []XIDCount{{13, 2}, {48, 2}}, tr.XIDCounts("GPU-a"))
}

func TestForgetsDevicesThatAreGone(t *testing.T) {
	tr := New(10*time.Minute, 20*time.Minute)
	tr.Observe(snap(t0, healthy(gpu("MIG-old"))))
	for m := 1; m <= 30; m++ {
		tr.Observe(snap(t0.Add(time.Duration(m)*time.Minute), healthy(gpu("GPU-a"))))
	}
	assert.Equal(t, 1, tr.Len(), "a MIG instance destroyed long ago is forgotten")
}
