package mapping

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
)

// neuron-monitor reports counts per captured period. Prometheus and most
// backends want cumulative sums whose start time stays fixed for the life of
// the series, so the receiver keeps running totals: per device for ECC
// events, per runtime (tag and pid) for executions and errors.

// deviceState lives as long as the receiver: a host's devices do not come
// and go.
type deviceState struct {
	start pcommon.Timestamp
	// ecc holds running totals; reported says which counters this release
	// prints at all (older ones have no sram_ecc_corrected).
	ecc      [eccKinds]int64
	reported [eccKinds]bool
	// state is the worst hw.state seen since the receiver started: an
	// uncorrected ECC event means "replace the instance", and a quiet
	// period afterwards does not make the device healthy again.
	state string
}

func newDeviceState(start pcommon.Timestamp) *deviceState {
	return &deviceState{start: start, state: accelschema.HWStateOK}
}

// record adds one period's count and returns the classification when the
// count grew.
func (d *deviceState) record(k eccKind, delta int64) (xid.Classification, bool) {
	d.reported[k] = true
	if delta <= 0 {
		return xid.Classification{}, false
	}
	d.ecc[k] += delta
	cl := xid.ForCondition(eccTable[k].condition)
	d.state = xid.Worse(d.state, cl.State)
	return cl, true
}

func (d *deviceState) anyReported() bool {
	for _, r := range d.reported {
		if r {
			return true
		}
	}
	return false
}

type runtimeKey struct {
	tag string
	pid int64
}

// Number of values of the generated enums (they start at 1).
const (
	numStatuses   = int(metadata.AttributeExecutionStatusFailedToQueue) + 1
	numErrorTypes = int(metadata.AttributeExecutionErrorTypeHardware) + 1
)

// runtimeState is dropped when its runtime is missing from a report, so a
// restarted runtime (new pid) starts new series with a new start time.
type runtimeState struct {
	start    pcommon.Timestamp
	lastSeen uint64

	outcomes  [numStatuses]int64
	errors    [numErrorTypes]int64
	hasCounts bool
}
