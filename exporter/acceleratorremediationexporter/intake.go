package acceleratorremediationexporter

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// maxEvidenceAttrs bounds what one plan keeps of its event's attributes.
const maxEvidenceAttrs = 64

// saveTimeout bounds a save made on the pipeline's path (a new plan, a
// reset report): with plans in the cluster it is an API call, and a slow
// API server must not stall the logs pipeline.
const saveTimeout = 10 * time.Second

// intake turns health events (and findings that name a health action) into
// plans: the event's failure mode and action, classified upstream by
// internal/xid, choose the catalogue's plan; the event's resource says what
// it acts on. One open plan per device (or node) and action: a recurring
// XID joins the open plan rather than piling up new ones.
func (e *remediationExporter) intake(ld plog.Logs) {
	e.intakeMu.Lock()
	defer e.intakeMu.Unlock()
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		res := rls.At(i).Resource().Attributes()
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				e.intakeRecord(res, lrs.At(k))
			}
		}
	}
}

func (e *remediationExporter) intakeRecord(res pcommon.Map, lr plog.LogRecord) {
	attrs := lr.Attributes()
	event := str(attrs, accelschema.AttrEventName)
	if event == accelschema.EventGPUReset {
		e.resetReport(res, lr)
		return
	}
	if !strings.HasPrefix(event, "accelerator.health.") && event != accelschema.EventFinding {
		return
	}
	subj := subjectOf(res)
	e.evidence.add(subj, lr, event)
	c := xid.Classification{Action: str(attrs, accelschema.AttrHealthAction), FailureMode: str(attrs, accelschema.AttrHealthFailureMode)}
	rp, ok := xid.PlanFor(c)
	if !ok {
		return
	}
	observed := lr.Timestamp().AsTime()
	if lr.Timestamp() == 0 {
		observed = lr.ObservedTimestamp().AsTime()
	}
	ev := plan.Evidence{
		Event:       event,
		XID:         int(intOr(attrs, accelschema.AttrXID, 0)),
		Description: str(attrs, accelschema.AttrHealthDescription),
		Observed:    observed.UTC(),
		Attributes:  evidenceAttrs(res, attrs),
	}
	if ev.Description == "" {
		ev.Description = lr.Body().AsString()
	}
	p := plan.New(rp, subj, ev, e.now())
	if open, ok := e.store.Open(p.Key()); ok {
		e.logger.Debug("accelerator_remediation: event joins the open plan", zap.String("plan", open.ID), zap.String("event", event))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
	defer cancel()
	if err := e.store.Save(ctx, p); err != nil {
		e.problems.Fail("storage", err)
		e.rlog.Error("storage", "accelerator_remediation: plan not saved", zap.String("plan", p.ID), zap.Error(err))
		return
	}
	e.audit.Created(p)
	e.wake()
}

func subjectOf(res pcommon.Map) plan.Subject {
	s := plan.Subject{
		Node:         str(res, accelschema.AttrK8sNodeName),
		DeviceID:     str(res, accelschema.AttrHWID),
		DeviceIndex:  intOr(res, accelschema.AttrDeviceIndex, -1),
		Model:        str(res, accelschema.AttrHWModel),
		InstanceID:   str(res, accelschema.AttrHostID),
		InstanceType: str(res, accelschema.AttrHostType),
		Region:       str(res, accelschema.AttrCloudRegion),
		Zone:         str(res, accelschema.AttrCloudZone),
		ECSCluster:   str(res, accelschema.AttrECSClusterARN),
		DRADriver:    str(res, accelschema.AttrDRADriver),
		DRAPool:      str(res, accelschema.AttrDRAPool),
		DRADevice:    str(res, accelschema.AttrDRADevice),
		Driver:       str(res, accelschema.AttrHWDriverVersion),
	}
	// A device's parent is the physical device a partition belongs to: the
	// reset and the device taint act on it.
	if parent := str(res, accelschema.AttrHWParent); parent != "" {
		s.DeviceID = parent
	}
	if pod := str(res, accelschema.AttrK8sPodName); pod != "" {
		s.Holders = []plan.Pod{{Namespace: str(res, accelschema.AttrK8sNamespaceName), Name: pod, UID: str(res, accelschema.AttrK8sPodUID)}}
		s.HoldersKnown = true
	} else if str(res, accelschema.AttrAllocationState) == accelschema.AllocationUnallocated {
		s.HoldersKnown = true // nobody holds it
	}
	return s
}

func evidenceAttrs(maps ...pcommon.Map) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m.All() {
			if len(out) >= maxEvidenceAttrs {
				return out
			}
			out[k] = v.AsString()
		}
	}
	return out
}

func str(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	return v.AsString()
}

func intOr(m pcommon.Map, key string, d int64) int64 {
	v, ok := m.Get(key)
	if !ok {
		return d
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeDouble:
		return int64(v.Double())
	}
	return d
}

// nowUTC is the exporter's clock (tests set e.now).
func nowUTC() time.Time { return time.Now().UTC() }
