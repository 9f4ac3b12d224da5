package dcgmreceiver

import (
	"context"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/health"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
)

// publish sends health events to the logs pipeline, each with the resource
// of the device it concerns (the same resource its metrics carry).
func (r *dcgmReceiver) publish(ctx context.Context, records []health.Record) {
	if len(records) == 0 {
		return
	}
	r.mu.Lock()
	next := r.logs
	r.mu.Unlock()
	if next == nil {
		return
	}
	logs := eventLogs(records, r.cfg.ResourceAttributes, r.hostName)
	ctx = r.obsLogs.StartLogsOp(ctx)
	err := next.ConsumeLogs(ctx, logs)
	r.obsLogs.EndLogsOp(ctx, metadata.Type.String(), len(records), err)
	if err != nil {
		r.logger.Error("health events were refused by the logs pipeline", zap.Int("events", len(records)), zap.Error(err))
	}
}

// eventLogs builds one log record per health event.
func eventLogs(records []health.Record, rac metadata.ResourceAttributesConfig, hostName string) plog.Logs {
	logs := plog.NewLogs()
	for _, rec := range records {
		rl := logs.ResourceLogs().AppendEmpty()
		switch {
		case rec.Device.HWID != "":
			buildResource(metadata.NewResourceBuilder(rac), rec.Device).MoveTo(rl.Resource())
		case rec.Device.PCIBusID != "":
			// A device the kernel log names that no source knows (or an
			// NVSwitch): the node's resource and the bus id.
			rb := metadata.NewResourceBuilder(rac)
			rb.SetAcceleratorPciBusID(rec.Device.PCIBusID)
			nodeResource(rb, hostName).MoveTo(rl.Resource())
		default:
			nodeResource(metadata.NewResourceBuilder(rac), hostName).MoveTo(rl.Resource())
		}
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName(metadata.ScopeName)
		lr := sl.LogRecords().AppendEmpty()
		ts := pcommon.NewTimestampFromTime(rec.Time)
		lr.SetTimestamp(ts)
		lr.SetObservedTimestamp(ts)
		lr.SetEventName(rec.EventName)
		sev, text := severity(rec.Class.State)
		lr.SetSeverityNumber(sev)
		lr.SetSeverityText(text)
		lr.Body().SetStr(rec.Message)
		attrs := lr.Attributes()
		attrs.PutStr(accelschema.AttrEventName, rec.EventName)
		if rec.Device.HWID != "" {
			attrs.PutStr(accelschema.AttrHWID, rec.Device.HWID)
		}
		if rec.XID != 0 {
			attrs.PutInt(accelschema.AttrXID, int64(rec.XID))
		}
		attrs.PutStr(accelschema.AttrHWState, rec.Class.State)
		attrs.PutStr(accelschema.AttrHealthFailureMode, rec.Class.FailureMode)
		attrs.PutStr(accelschema.AttrHealthAction, rec.Class.Action)
		attrs.PutStr(accelschema.AttrHealthDescription, rec.Class.Description)
		if len(rec.Sources) > 0 {
			attrs.PutStr(accelschema.AttrHealthSources, strings.Join(rec.Sources, ","))
		}
		if rec.PID != 0 {
			attrs.PutInt(accelschema.AttrProcessPID, int64(rec.PID))
		}
		if rec.Process != "" {
			attrs.PutStr(accelschema.AttrProcessName, rec.Process)
		}
		if rec.Detail != "" {
			attrs.PutStr(accelschema.AttrHealthDetail, rec.Detail)
		}
	}
	return logs
}

func severity(state string) (plog.SeverityNumber, string) {
	switch state {
	case accelschema.HWStateFailed:
		return plog.SeverityNumberError, "ERROR"
	case accelschema.HWStateDegraded, accelschema.HWStatePredictedFailure:
		return plog.SeverityNumberWarn, "WARN"
	}
	return plog.SeverityNumberInfo, "INFO"
}
