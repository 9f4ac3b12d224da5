package acceleratork8sreceiver

import (
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver/internal/lifecycle"
)

// scaling is a replica change in progress: decided when this receiver saw
// spec.replicas change, done when the replicas are ready (or gone).
type scaling struct {
	from, to  int32
	decidedAt time.Time
}

type workloadKey struct{ kind, namespace, name string }

// observeWorkload follows one accelerator workload's replicas. The first
// sight of a workload records its replicas without an event: its last
// scaling happened before this receiver started.
func (s *state) observeWorkload(w lifecycle.Workload, now time.Time) {
	k := workloadKey{w.Kind, w.Namespace, w.Name}
	last, known := s.desired[k]
	if len(s.desired) < maxTracked || known {
		s.desired[k] = w.Desired
	}
	if known && last != w.Desired {
		if prev, ok := s.scalings[k]; ok {
			// A new decision before the last one settled: the last one is
			// reported as superseded, with no time to ready.
			s.appendScaling(w, prev, now, false)
		}
		s.scalings[k] = scaling{from: last, to: w.Desired, decidedAt: now}
	}
	if sc, ok := s.scalings[k]; ok && w.Settled(sc.from) {
		delete(s.scalings, k)
		s.appendScaling(w, sc, now, true)
	}
}

func (s *state) forgetWorkload(kind, namespace, name string) {
	k := workloadKey{kind, namespace, name}
	delete(s.desired, k)
	delete(s.scalings, k)
}

func (s *state) appendScaling(w lifecycle.Workload, sc scaling, now time.Time, settled bool) {
	rl := s.logs.ResourceLogs().AppendEmpty()
	putWorkload(rl.Resource().Attributes(), workload{namespace: w.Namespace, kind: w.Kind, name: w.Name, cluster: s.cfg.ClusterName,
		model: modelOf(w.Labels, nil, s.cfg.ModelLabels)})
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(now))
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(now))
	lr.SetEventName(accelschema.EventScaling)
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	lr.SetSeverityText("INFO")
	a := lr.Attributes()
	a.PutStr(accelschema.AttrEventName, accelschema.EventScaling)
	a.PutInt(accelschema.AttrScalingFrom, int64(sc.from))
	a.PutInt(accelschema.AttrScalingTo, int64(sc.to))
	direction := accelschema.ScalingUp
	if sc.to < sc.from {
		direction = accelschema.ScalingDown
	}
	a.PutStr(accelschema.AttrScalingDirection, direction)
	outcome := accelschema.ScalingSuperseded
	body := w.Kind + " " + w.Namespace + "/" + w.Name + " " + direction + " " + strconv.Itoa(int(sc.from)) + " → " + strconv.Itoa(int(sc.to))
	if settled {
		outcome = accelschema.ScalingReady
		secs := now.Sub(sc.decidedAt).Seconds()
		a.PutDouble(accelschema.AttrScalingDecisionToReady, secs)
		body += ", ready after " + now.Sub(sc.decidedAt).Round(time.Millisecond).String()
	} else {
		body += ", superseded before it was ready"
	}
	a.PutStr(accelschema.AttrScalingOutcome, outcome)
	lr.Body().SetStr(body)
}
