package mapping

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
)

// A health event is one log record per device and ECC counter that grew in
// a report, on the device's resource, classified by internal/xid.
type healthEvent struct {
	kind   eccKind
	count  int64
	period float64
	cl     xid.Classification
}

func (m *Mapper) healthEvent(d int, k eccKind, n int64, period float64, cl xid.Classification) {
	if m.health == nil {
		m.health = map[int][]healthEvent{}
	}
	m.health[d] = append(m.health[d], healthEvent{kind: k, count: n, period: period, cl: cl})
}

// attachHealthResource writes the device's pending events under its
// resource.
func (m *Mapper) attachHealthResource(d int, res pcommon.Resource) {
	events := m.health[d]
	if len(events) == 0 {
		return
	}
	delete(m.health, d)
	rl := m.logs.ResourceLogs().AppendEmpty()
	res.CopyTo(rl.Resource())
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	for _, ev := range events {
		info := eccTable[ev.kind]
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(m.ts)
		lr.SetObservedTimestamp(m.ts)
		lr.SetEventName(accelschema.EventNeuronHWError)
		if ev.cl.State == accelschema.HWStateFailed {
			lr.SetSeverityNumber(plog.SeverityNumberError)
			lr.SetSeverityText("ERROR")
		} else {
			lr.SetSeverityNumber(plog.SeverityNumberWarn)
			lr.SetSeverityText("WARN")
		}
		window := ""
		if ev.period > 0 {
			window = fmt.Sprintf(" in the last %.1f s", ev.period)
		}
		lr.Body().SetStr(fmt.Sprintf("%s: %d %s event(s)%s: %s; recommended action: %s",
			deviceID(d), ev.count, info.what, window, ev.cl.Description, ev.cl.Action))
		attrs := lr.Attributes()
		attrs.PutStr(accelschema.AttrEventName, accelschema.EventNeuronHWError)
		attrs.PutStr(accelschema.AttrErrorType, info.errorType)
		attrs.PutStr(accelschema.AttrHealthFailureMode, ev.cl.FailureMode)
		attrs.PutStr(accelschema.AttrHealthAction, ev.cl.Action)
		attrs.PutStr(accelschema.AttrHWState, ev.cl.State)
		attrs.PutStr(accelschema.AttrHealthDescription, ev.cl.Description)
	}
}
