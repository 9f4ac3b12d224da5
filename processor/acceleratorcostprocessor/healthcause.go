package acceleratorcostprocessor

import (
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// hw.status says that a device failed, not why. The health event that says
// why travels in the logs pipeline and may come late (the dcgm receiver
// holds an XID to merge what its sources saw) or never reach this
// processor; the finding must not then fall back to "contact support" when
// the device's own metrics name the cause. hw.errors{error.type=xid} counts
// every XID the device reported: an XID whose count grew and which
// internal/xid says fails the device is the failure mode, and its action is
// the one the health event would have carried.

// xidCount is one hw.errors{error.type=xid} point.
type xidCount struct {
	code  int
	count float64
}

// readXIDs keeps the XID counts at the newest timestamp.
func (sg *signals) readXIDs(dps pmetric.NumberDataPointSlice) {
	_, latestT := latest(dps)
	for k := 0; k < dps.Len(); k++ {
		dp := dps.At(k)
		if dp.Timestamp() != latestT {
			continue
		}
		attrs := dp.Attributes()
		if typ, ok := attrs.Get(s.AttrErrorType); !ok || typ.Str() != s.ErrorXID {
			continue
		}
		code, ok := attrs.Get(s.AttrXID)
		if !ok {
			continue
		}
		sg.xids = append(sg.xids, xidCount{code: int(code.Int()), count: number(dp)})
	}
}

// observeXIDs updates the device's failure cause from its XID counts, after
// its hw.status has been recorded. A count seen for the first time counts
// as grown (the receiver's counts start at zero when it starts); one that
// fell is a restarted receiver, and a non-zero count after it is new. Of
// the XIDs that grew, the most severe wins, the newer on a tie. A device
// that is no longer failed has no cause.
func (h *healthState) observeXIDs(counts []xidCount) {
	for _, c := range counts {
		prev, seen := h.xidCounts[c.code]
		if h.xidCounts == nil {
			h.xidCounts = map[int]float64{}
		}
		h.xidCounts[c.code] = c.count
		if c.count <= 0 || (seen && c.count == prev) {
			continue
		}
		cl := xid.Lookup(c.code)
		if !xid.Unavailable(cl.State) {
			continue
		}
		if h.cause.Action == "" || xid.Worse(h.cause.State, cl.State) == cl.State {
			h.cause = cl
		}
	}
	if !h.statusFailed {
		h.cause = xid.Classification{}
	}
}
