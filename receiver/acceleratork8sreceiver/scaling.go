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
	// hpa is the HPA whose lastScaleTime is decidedAt; empty when the
	// receiver's own sight of the change is.
	hpa string
}

type workloadKey struct{ kind, namespace, name string }

// observeWorkload follows one accelerator workload's replicas. The first
// sight of a workload records its replicas without an event: its last
// scaling happened before this receiver started.
//
// readyAt is when the workload's Ready pods last turned Ready, and how
// many are Ready; it is asked for only when a scale-up settles. The
// workload's status and its pods come on two watches in no order: a
// scale-up whose status says ready before as many Ready pods were seen
// waits for them (onPod looks again) up to settleWait, then settles with
// what is known.
func (s *state) observeWorkload(w lifecycle.Workload, now time.Time, readyAt func() (time.Time, int32)) {
	k := workloadKey{w.Kind, w.Namespace, w.Name}
	last, known := s.desired[k]
	if len(s.desired) < maxTracked || known {
		s.desired[k] = w.Desired
		s.templates[k] = w.Labels
	}
	if known && last != w.Desired {
		if prev, ok := s.scalings[k]; ok {
			// A new decision before the last one settled: the last one is
			// reported as superseded, with no time to ready.
			s.appendScaling(w, prev, now, false)
		}
		s.scalings[k] = scaling{from: last, to: w.Desired, decidedAt: now}
	}
	if sc, ok := s.scalings[k]; ok {
		sc = s.decidedByAutoscaler(k, sc)
		s.scalings[k] = sc
		if w.Settled(sc.from) {
			end := now
			if w.Desired > sc.from {
				r, n := readyAt()
				// No pod of it seen at all: its pods are not watched here.
				if p, waiting := s.pendingSettle[k]; n > 0 && n < w.Desired && (!waiting || now.Sub(p.since) < settleWait) {
					if !waiting {
						p.since = now
					}
					p.w = w
					s.pendingSettle[k] = p
					return
				}
				// The last replica's own Ready time, when known and not
				// before the decision: exact, and in the cluster's clock
				// like an HPA's lastScaleTime.
				if !r.IsZero() && !r.Before(sc.decidedAt) {
					end = r
				}
			}
			delete(s.scalings, k)
			delete(s.pendingSettle, k)
			s.appendScaling(w, sc, end, true)
		}
	}
}

// decidedByAutoscaler takes the decision time from the workload's HPA when
// it asked for the new count: the HPA changes the workload's replicas
// before its own status, so this is looked at again until it settles.
func (s *state) decidedByAutoscaler(k workloadKey, sc scaling) scaling {
	if sc.hpa != "" {
		return sc
	}
	// A lastScaleTime far from when the change was seen is an older
	// decision's (the HPA's status lags its scaling by seconds).
	if a, ok := s.autoscalerOf(k); ok && a.Desired == sc.to && !a.LastScale.IsZero() && absDuration(a.LastScale.Sub(sc.decidedAt)) <= autoscalerSkew {
		sc.decidedAt, sc.hpa = a.LastScale, a.Name
	}
	return sc
}

func (s *state) forgetWorkload(kind, namespace, name string) {
	k := workloadKey{kind, namespace, name}
	delete(s.desired, k)
	delete(s.scalings, k)
	delete(s.templates, k)
	delete(s.pendingSettle, k)
}

// pendingSettle is a scale-up whose status says ready while fewer Ready
// pods of it were seen.
type pendingSettle struct {
	w     lifecycle.Workload
	since time.Time
}

// settleWait bounds the wait for a settled scale-up's pods: a node agent
// (node_name set) sees only its node's pods, never them all.
const settleWait = 30 * time.Second

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
	if sc.hpa != "" {
		a.PutStr(accelschema.AttrScalingDecidedBy, accelschema.ScalingDecidedByHPA)
		a.PutStr(accelschema.AttrAutoscalerName, sc.hpa)
	} else {
		a.PutStr(accelschema.AttrScalingDecidedBy, accelschema.ScalingDecidedByUnknown)
	}
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

// autoscalerSkew is how far an HPA's lastScaleTime may be from when the
// receiver saw the replica change and still be that change's decision.
const autoscalerSkew = 10 * time.Minute

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
