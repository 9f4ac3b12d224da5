package xid

import (
	"time"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// hw.status says that a device failed, not why. The health event that says
// why travels in the logs pipeline and may come late (the dcgm receiver
// holds an XID for its de-duplication window to merge what its sources
// saw) or never reach a given consumer. A device's hw.errors counters say
// why at once: the error class whose count grew is the cause, and the
// catalogue gives its action, the one the health event would carry.
// ErrorWatch is that reading, shared by every consumer that needs the
// cause before (or without) the event: the cost processor's
// unhealthy-capacity finding and the insights console.

// ErrorCount is one hw.errors point: its error.type, its accelerator.xid
// (0 for a class that is not an XID) and its running count.
type ErrorCount struct {
	Type  string
	XID   int
	Count float64
}

// ForError classifies an error class whose count grew. ok is false for
// classes that are no cause of failure by themselves (corrected ECC, link
// replays, …). neuron says the device is an AWS Neuron device, whose
// uncorrected memory ECC means replacing the instance.
func ForError(errorType string, code int, neuron bool) (Classification, bool) {
	switch errorType {
	case s.ErrorXID:
		return Lookup(code), true
	case s.ErrorECCUncorrected:
		if neuron {
			return ForCondition(NeuronMemECCUncorrected), true
		}
		return ForCondition(ECCUncorrected), true
	case s.ErrorSRAMECCUncorrected:
		return ForCondition(NeuronSRAMECCUncorrected), true
	}
	return Classification{}, false
}

// Cause is the failure a device's error counters name.
type Cause struct {
	Classification
	// At is the time of the report whose count grew.
	At time.Time
	// After is the time of the device's report before that one (zero when
	// there was none): a health event newer than After is about this
	// failure or a later one, and its own word wins.
	After time.Time
}

type errorKey struct {
	typ  string
	code int
}

// ErrorWatch follows one device's hw.errors counts. The zero value is
// ready to use.
type ErrorWatch struct {
	counts map[errorKey]float64
	cause  Cause
	last   time.Time
}

// Observe takes one report of the device's counts at time at (classes
// absent from it keep their last count), with whether the device is
// healthy (hw.status ok) in it. A count seen for the first time counts as
// grown (a receiver's counts start at zero when it starts, and a class's
// series appears with its first error); one that fell is a restarted
// receiver, and a non-zero count after it is new. Of the classes that grew
// and that the catalogue says are not ok, the most severe is the cause, the
// newer on a tie. A healthy device has no cause: the next one is a new
// failure.
func (w *ErrorWatch) Observe(at time.Time, counts []ErrorCount, neuron, healthy bool) {
	for _, c := range counts {
		k := errorKey{c.Type, c.XID}
		prev, seen := w.counts[k]
		if w.counts == nil {
			w.counts = map[errorKey]float64{}
		}
		w.counts[k] = c.Count
		if c.Count <= 0 || (seen && c.Count == prev) {
			continue
		}
		cl, ok := ForError(c.Type, c.XID, neuron)
		if !ok || cl.State == s.HWStateOK {
			continue
		}
		if w.cause.Action == "" || Worse(w.cause.State, cl.State) == cl.State {
			w.cause = Cause{Classification: cl, At: at, After: w.last}
		}
	}
	if at.After(w.last) {
		w.last = at
	}
	if healthy {
		w.cause = Cause{}
	}
}

// Cause is the failure the counts named since the device was last healthy;
// ok is false when none did.
func (w *ErrorWatch) Cause() (Cause, bool) {
	return w.cause, w.cause.Action != ""
}
