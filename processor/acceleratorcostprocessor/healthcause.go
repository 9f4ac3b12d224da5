package acceleratorcostprocessor

import (
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// The health event that says why a device failed may come late or never
// reach this processor; the unhealthy-capacity finding must not then fall
// back to "contact support" when the device's own hw.errors{error.type=xid}
// counts name the cause. xid.ErrorWatch reads them (the console reads them
// the same way); only a cause that makes the device unavailable counts here.

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
		sg.xids = append(sg.xids, xid.ErrorCount{Type: s.ErrorXID, XID: int(code.Int()), Count: number(dp)})
	}
}

// failureCause is the XID that failed the device, by its counts; ok is
// false when none that makes it unavailable grew since it was last ok.
func (h *healthState) failureCause() (xid.Cause, bool) {
	c, ok := h.errors.Cause()
	return c, ok && xid.Unavailable(c.State)
}
