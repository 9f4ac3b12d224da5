package acceleratorcostprocessor

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// healthEventPrefix is what the event.name of every health event starts
// with (accelerator.health.xid, accelerator.health.device_lost, …).
var healthEventPrefix = s.EventXID[:strings.LastIndexByte(s.EventXID, '.')+1]

// processLogs passes logs through. Health events that put a device in a
// failure mode (hw.state=failed) mark it unavailable for health.hold and
// raise an unhealthy-capacity finding for each resource of that device the
// processor knows, appended to the same batch.
func (p *costProcessor) processLogs(_ context.Context, ld plog.Logs) (plog.Logs, error) {
	now := p.now()
	var out []finding
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes()
		hwID := stringAttr(res, s.AttrHWID)
		if hwID == "" {
			continue
		}
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				if ev := eventName(lr); !strings.HasPrefix(ev, healthEventPrefix) {
					continue
				}
				state := stringAttr(lr.Attributes(), s.AttrHWState)
				if state == "" {
					state = stringAttr(res, s.AttrHWState)
				}
				if !xid.Unavailable(state) {
					continue
				}
				out = p.markFailed(hwID, lr, now, out)
			}
		}
	}
	if len(out) > 0 {
		p.appendFindings(ld, out, now)
	}
	return ld, nil
}

func (p *costProcessor) markFailed(hwID string, lr plog.LogRecord, now time.Time, out []finding) []finding {
	t := lr.Timestamp()
	if t == 0 {
		t = lr.ObservedTimestamp()
	}
	if t == 0 {
		t = pcommon.NewTimestampFromTime(now)
	}
	attrs := lr.Attributes()
	action := stringAttr(attrs, s.AttrHealthAction)
	desc := stringAttr(attrs, s.AttrHealthDescription)
	if action == "" {
		if code, ok := attrs.Get(s.AttrXID); ok && code.Type() == pcommon.ValueTypeInt {
			c := xid.Lookup(int(code.Int()))
			action = c.Action
			if desc == "" {
				desc = c.Description
			}
		}
	}
	if action == "" {
		action = s.ActionContactSupport
	}
	if desc == "" {
		desc = lr.Body().AsString()
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.healthOf(hwID, now)
	if h.failedUntil == 0 || t > h.failedUntil {
		h.eventT = t // a new failure; a repeat within the hold only extends it
	}
	h.failedUntil = max(h.failedUntil, t+pcommon.Timestamp(p.cfg.Health.Hold))
	h.action, h.mode, h.description = action, stringAttr(attrs, s.AttrHealthFailureMode), desc
	for _, st := range p.resources {
		if st.id.hwID != hwID && st.id.parent != hwID {
			continue
		}
		if st.devicePrice > 0 && st.share > 0 && p.cooldownOver(st, findingUnhealthy, t) {
			out = p.raise(st, p.unhealthy(st, t, h), out)
		}
	}
	return out
}

func eventName(lr plog.LogRecord) string {
	if n := lr.EventName(); n != "" {
		return n
	}
	return stringAttr(lr.Attributes(), s.AttrEventName)
}

func stringAttr(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}
