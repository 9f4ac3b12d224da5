package xid

import (
	"testing"
	"time"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

func xidCount(code int, n float64) ErrorCount {
	return ErrorCount{Type: s.ErrorXID, XID: code, Count: n}
}

func TestErrorWatchNamesTheXIDWhoseCountGrew(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var w ErrorWatch
	w.Observe(t0, []ErrorCount{xidCount(13, 2)}, false, true)
	if _, ok := w.Cause(); ok {
		t.Fatal("a healthy device has a cause")
	}
	// Failed, XID 48's series appears at 1: its first count is growth.
	w.Observe(t0.Add(time.Second), []ErrorCount{xidCount(13, 2), xidCount(48, 1)}, false, false)
	c, ok := w.Cause()
	if !ok || c.Code != 48 || c.Action != Lookup(48).Action {
		t.Fatalf("cause %+v (%v), want XID 48 with %s", c, ok, Lookup(48).Action)
	}
	if !c.At.Equal(t0.Add(time.Second)) || !c.After.Equal(t0) {
		t.Errorf("cause at %v after %v, want the report that grew and the one before it", c.At, c.After)
	}
	// A less severe XID that grows later does not replace it; XID 13's
	// unchanged count is no growth.
	w.Observe(t0.Add(2*time.Second), []ErrorCount{xidCount(13, 2), xidCount(48, 1), xidCount(63, 1)}, false, false)
	if c, _ := w.Cause(); c.Code != 48 {
		t.Errorf("cause XID %d after a degraded XID grew, want 48 (the more severe)", c.Code)
	}
	// An equally severe one that grows later is the newer cause.
	w.Observe(t0.Add(3*time.Second), []ErrorCount{xidCount(79, 1)}, false, false)
	if c, _ := w.Cause(); c.Code != 79 || c.Action != Lookup(79).Action {
		t.Errorf("cause %+v, want XID 79 (as severe, newer)", c)
	}
	// Healthy again: no cause, and the old counts are no new growth.
	w.Observe(t0.Add(4*time.Second), []ErrorCount{xidCount(79, 1)}, false, true)
	w.Observe(t0.Add(5*time.Second), []ErrorCount{xidCount(79, 1), xidCount(48, 1)}, false, false)
	if c, ok := w.Cause(); ok {
		t.Errorf("cause %+v from counts that did not grow since the device was healthy", c)
	}
	// A receiver restart: the count falls to 0 and then 1 is a new XID.
	w.Observe(t0.Add(6*time.Second), []ErrorCount{xidCount(48, 0)}, false, false)
	w.Observe(t0.Add(7*time.Second), []ErrorCount{xidCount(48, 1)}, false, false)
	if c, _ := w.Cause(); c.Code != 48 {
		t.Errorf("cause XID %d after XID 48's count restarted and grew, want 48", c.Code)
	}
}

func TestErrorWatchReadsOtherErrorClasses(t *testing.T) {
	var gpu, neuron ErrorWatch
	now := time.Unix(1000, 0)
	gpu.Observe(now, []ErrorCount{{Type: s.ErrorECCCorrected, Count: 50}, {Type: s.ErrorECCUncorrected, Count: 1}}, false, false)
	if c, _ := gpu.Cause(); c.Action != ForCondition(ECCUncorrected).Action {
		t.Errorf("GPU uncorrected ECC: action %q, want %q", c.Action, ForCondition(ECCUncorrected).Action)
	}
	neuron.Observe(now, []ErrorCount{{Type: s.ErrorECCUncorrected, Count: 1}}, true, false)
	if c, _ := neuron.Cause(); c.Action != ForCondition(NeuronMemECCUncorrected).Action {
		t.Errorf("Neuron uncorrected ECC: action %q, want %q", c.Action, ForCondition(NeuronMemECCUncorrected).Action)
	}
	var corrected ErrorWatch
	corrected.Observe(now, []ErrorCount{{Type: s.ErrorECCCorrected, Count: 9}, {Type: s.ErrorPCIeReplay, Count: 3}}, false, false)
	if c, ok := corrected.Cause(); ok {
		t.Errorf("corrected errors and replays named a cause: %+v", c)
	}
}
