package acceleratork8sreceiver

import (
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver/internal/lifecycle"
)

// observeAutoscaler keeps the HPA of each workload and reports its
// decisions about accelerator workloads: a record whenever its wanted or
// current replicas, last scale time or conditions change (a resync that
// changes nothing is no record). An HPA whose target is not (yet) a known
// accelerator workload is kept silently.
func (s *state) observeAutoscaler(a lifecycle.Autoscaler, now time.Time) {
	target := workloadKey{a.TargetKind, a.Namespace, a.TargetName}
	hk := autoscalerKey{a.Namespace, a.Name}
	prev, known := s.hpas[hk]
	if !known && len(s.hpas) >= maxTracked {
		return
	}
	s.hpas[hk] = a
	s.hpaOf[target] = hk
	if sc, ok := s.scalings[target]; ok {
		s.scalings[target] = s.decidedByAutoscaler(target, sc)
	}
	if known && prev.Decision() == a.Decision() {
		return
	}
	if _, accelerator := s.desired[target]; !accelerator {
		return
	}
	s.appendAutoscaler(a, now)
}

func (s *state) forgetAutoscaler(namespace, name string) {
	hk := autoscalerKey{namespace, name}
	if a, ok := s.hpas[hk]; ok {
		target := workloadKey{a.TargetKind, a.Namespace, a.TargetName}
		if s.hpaOf[target] == hk {
			delete(s.hpaOf, target)
		}
	}
	delete(s.hpas, hk)
}

type autoscalerKey struct{ namespace, name string }

// autoscalerOf is the HPA scaling a workload, if one was seen.
func (s *state) autoscalerOf(k workloadKey) (lifecycle.Autoscaler, bool) {
	hk, ok := s.hpaOf[k]
	if !ok {
		return lifecycle.Autoscaler{}, false
	}
	a, ok := s.hpas[hk]
	return a, ok
}

func (s *state) appendAutoscaler(a lifecycle.Autoscaler, now time.Time) {
	rl := s.logs.ResourceLogs().AppendEmpty()
	var labels map[string]string
	if w, ok := s.templates[workloadKey{a.TargetKind, a.Namespace, a.TargetName}]; ok {
		labels = w
	}
	putWorkload(rl.Resource().Attributes(), workload{namespace: a.Namespace, kind: a.TargetKind, name: a.TargetName, cluster: s.cfg.ClusterName,
		model: modelOf(labels, nil, s.cfg.ModelLabels)})
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(now))
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(now))
	lr.SetEventName(accelschema.EventAutoscaler)
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	lr.SetSeverityText("INFO")
	if a.Limited || a.Unable {
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
	}
	attrs := lr.Attributes()
	attrs.PutStr(accelschema.AttrEventName, accelschema.EventAutoscaler)
	putAutoscaler(attrs, a)
	attrs.PutInt(accelschema.AttrAutoscalerDesired, int64(a.Desired))
	attrs.PutInt(accelschema.AttrAutoscalerCurrent, int64(a.Current))
	attrs.PutInt(accelschema.AttrAutoscalerMin, int64(a.Min))
	attrs.PutInt(accelschema.AttrAutoscalerMax, int64(a.Max))
	attrs.PutStr(accelschema.AttrAutoscalerConditions, a.Summary())
	attrs.PutBool(accelschema.AttrAutoscalerLimited, a.Limited)
	attrs.PutBool(accelschema.AttrAutoscalerUnable, a.Unable)
	body := "HPA " + a.Namespace + "/" + a.Name + " wants " + strconv.Itoa(int(a.Desired)) + " replicas of " + a.TargetKind + " " + a.TargetName +
		" (" + strconv.Itoa(int(a.Current)) + " now, " + strconv.Itoa(int(a.Min)) + ".." + strconv.Itoa(int(a.Max)) + ")"
	switch {
	case a.Unable:
		body += ", and cannot act now: " + a.Summary()
	case a.Limited:
		body += ", held at its limit: " + a.Summary()
	}
	lr.Body().SetStr(body)
}

// putAutoscaler names the HPA and its last scale time on a record.
func putAutoscaler(attrs pcommon.Map, a lifecycle.Autoscaler) {
	attrs.PutStr(accelschema.AttrAutoscalerName, a.Name)
	if !a.LastScale.IsZero() {
		attrs.PutStr(accelschema.AttrAutoscalerLastScaleTime, a.LastScale.UTC().Format(time.RFC3339))
	}
}
