package fleet

import (
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// failure is what the console says about a device that is not ok: its
// failure mode, the recommended action and since when.
type failure struct {
	mode, action, brief *string
	since               *time.Time
}

// failureOf decides between the device's last health event and the cause
// its error counters name. The receiver holds an XID's event for its
// de-duplication window while hw.status and hw.errors go out at once, so
// the counters say why first: their cause (from internal/xid, the action
// the event will carry) stands until an event about this failure or a
// later one brings its own action, which wins (NVML's recovery action may
// override the catalogue's). An event is about this failure when it names
// the cause's XID, or is newer than the report before the count grew (a
// kernel-log time may be older than that report; the XID says it all the
// same).
func failureOf(r *Resource, ev *Event) failure {
	var f failure
	if ev != nil {
		f.mode, f.action, f.since = ev.FailureMode, ev.Action, ptr(ev.Time.UTC())
	}
	c := r.Cause
	if c == nil || (ev != nil && ev.Action != nil && (ev.Time.After(c.After) || sameXID(ev, c))) {
		if f.action != nil {
			f.brief = ActionBrief(*f.action)
		}
		return f
	}
	f.mode, f.action, f.brief = ptr(c.FailureMode), ptr(c.Action), ActionBrief(c.Action)
	f.since = nil
	if !c.At.IsZero() {
		f.since = ptr(c.At.UTC())
	}
	return f
}

// sameXID reports whether the event is about the XID that is the cause.
func sameXID(ev *Event, c *xid.Cause) bool {
	return c.Code != 0 && ev.XID != nil && *ev.XID == int64(c.Code)
}
