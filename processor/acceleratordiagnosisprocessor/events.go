package acceleratordiagnosisprocessor

import (
	"context"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// healthPrefix is what every health event's name starts with.
var healthPrefix = s.EventXID[:strings.LastIndexByte(s.EventXID, '.')+1]

// processLogs reads the events the rules need as evidence and passes every
// record through: health events (XIDs, uncorrected ECC) of devices,
// accelerator_k8s's cold starts and scale-ups, and its zone_imbalance
// findings.
func (p *diagnosisProcessor) processLogs(_ context.Context, ld plog.Logs) (plog.Logs, error) {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes()
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				p.ingestRecord(res, lrs.At(k), now)
			}
		}
	}
	return ld, nil
}

func (p *diagnosisProcessor) ingestRecord(res pcommon.Map, lr plog.LogRecord, now time.Time) {
	ev := lr.EventName()
	if ev == "" {
		ev = str(lr.Attributes(), s.AttrEventName)
	}
	t := lr.Timestamp()
	if t == 0 {
		t = lr.ObservedTimestamp()
	}
	if t == 0 {
		t = pcommon.NewTimestampFromTime(now)
	}
	switch {
	case strings.HasPrefix(ev, healthPrefix):
		id := str(res, s.AttrHWID)
		if id == "" {
			return
		}
		var xid bool
		switch ev {
		case s.EventXID, s.EventDeviceLost:
			xid = true
		case s.EventECCUncorrected:
		default:
			return // row remaps, MPS, links: not the unhealthy-device rule's evidence
		}
		d := p.devices[id]
		if d == nil {
			d = &device{win: emptyWindows, seen: now}
			p.devices[id] = d
		}
		d.health = append(pruneHealth(d.health, t, p.cfg.Recent), healthEvent{t: t, xid: xid})
	case ev == s.EventColdStart, ev == s.EventScaling, ev == s.EventFinding:
		ns, wl := str(res, s.AttrK8sNamespaceName), str(res, s.AttrWorkloadName)
		if ns == "" || wl == "" {
			return
		}
		a := lr.Attributes()
		switch ev {
		case s.EventColdStart:
			ws := p.workloadOf(ns+"/"+wl, now)
			ws.coldStarts = append(pruneTimes(ws.coldStarts, t, p.cfg.Recent), t)
			ws.changedAt(t)
		case s.EventScaling:
			ws := p.workloadOf(ns+"/"+wl, now)
			ws.changedAt(t) // any scaling: the endpoint's windows settle
			if str(a, s.AttrScalingDirection) != s.ScalingUp || str(a, s.AttrScalingOutcome) != s.ScalingReady {
				return
			}
			from, _ := a.Get(s.AttrScalingFrom)
			to, _ := a.Get(s.AttrScalingTo)
			ws.scaleUps = append(pruneScaleUps(ws.scaleUps, t, p.cfg.Recent), scaleUp{t: t, added: to.Int() - from.Int()})
		case s.EventFinding:
			if str(a, s.AttrFindingKind) != s.FindingZoneImbalance {
				return
			}
			ws := p.workloadOf(ns+"/"+wl, now)
			ws.imbalance = str(a, s.AttrFindingEvidence)
			ws.imbalanceAt = t
			ws.zoneCounts = zoneCounts(ws.imbalance)
		}
	}
}

// changedAt records a change of the workload's replicas at t.
func (ws *workloadState) changedAt(t pcommon.Timestamp) {
	if t > ws.changed {
		ws.changed = t
	}
}

// zoneCounts parses a zone_imbalance finding's evidence
// (`replicas_<zone>=<n> …`).
func zoneCounts(evidence string) map[string]int64 {
	out := map[string]int64{}
	for _, f := range strings.Fields(evidence) {
		k, v, ok := strings.Cut(f, "=")
		zone, isZone := strings.CutPrefix(k, "replicas_")
		if !ok || !isZone {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[zone] = n
		}
	}
	return out
}

// imbalanced reports whether the workload's last zone_imbalance finding
// still holds: the replica gauges (when seen) show the counts it named, or
// (without gauges) it is recent.
func (ws *workloadState) imbalanced(at pcommon.Timestamp, recent time.Duration) bool {
	if ws.imbalance == "" {
		return false
	}
	if len(ws.zonesNow) == 0 || len(ws.zoneCounts) == 0 {
		return at >= ws.imbalanceAt && time.Duration(at-ws.imbalanceAt) <= recent
	}
	for zone, n := range ws.zoneCounts {
		if ws.zonesNow[zone] != n {
			return false
		}
	}
	return true
}

func within(t, at pcommon.Timestamp, recent time.Duration) bool {
	return t <= at && time.Duration(at-t) <= recent
}

func pruneTimes(ts []pcommon.Timestamp, at pcommon.Timestamp, recent time.Duration) []pcommon.Timestamp {
	out := ts[:0]
	for _, t := range ts {
		if t > at || time.Duration(at-t) <= 2*recent {
			out = append(out, t)
		}
	}
	return out
}

func pruneScaleUps(us []scaleUp, at pcommon.Timestamp, recent time.Duration) []scaleUp {
	out := us[:0]
	for _, u := range us {
		if u.t > at || time.Duration(at-u.t) <= 2*recent {
			out = append(out, u)
		}
	}
	return out
}

func pruneHealth(hs []healthEvent, at pcommon.Timestamp, recent time.Duration) []healthEvent {
	out := hs[:0]
	for _, h := range hs {
		if h.t > at || time.Duration(at-h.t) <= 2*recent {
			out = append(out, h)
		}
	}
	return out
}
