package fleet

import (
	"time"
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
// later one, one newer than the report before the count grew, brings its
// own action, which wins (NVML's recovery action may override the
// catalogue's).
func failureOf(r *Resource, ev *Event) failure {
	var f failure
	if ev != nil {
		f.mode, f.action, f.since = ev.FailureMode, ev.Action, ptr(ev.Time.UTC())
	}
	c := r.Cause
	if c == nil || (ev != nil && ev.Action != nil && ev.Time.After(c.After)) {
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
