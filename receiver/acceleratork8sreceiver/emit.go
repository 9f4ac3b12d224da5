package acceleratork8sreceiver

import (
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver/internal/lifecycle"
)

const scopeName = "github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver"

// putWorkload writes a workload's resource attributes.
func putWorkload(m pcommon.Map, w workload) {
	if w.cluster != "" {
		m.PutStr(accelschema.AttrK8sClusterName, w.cluster)
	}
	m.PutStr(accelschema.AttrK8sNamespaceName, w.namespace)
	m.PutStr(accelschema.AttrWorkloadName, w.name)
	switch w.kind {
	case "Deployment":
		m.PutStr(accelschema.AttrK8sDeploymentName, w.name)
	case "StatefulSet":
		m.PutStr(accelschema.AttrK8sStatefulSetName, w.name)
	case "Job":
		m.PutStr(accelschema.AttrK8sJobName, w.name)
	}
	if w.model != "" {
		m.PutStr(accelschema.AttrGenAIRequestModel, w.model)
	}
}

// metrics builds the cumulative cold-start histograms and the
// unschedulable gauge at now.
func (s *state) metrics(now time.Time, unschedulable []*corev1.Pod, zones zoneView) pmetric.Metrics {
	md := pmetric.NewMetrics()
	ts, start := pcommon.NewTimestampFromTime(now), pcommon.NewTimestampFromTime(s.start)
	if len(s.awaiting) > 0 {
		s.settleFirstRequests(now)
	}
	s.coldStartMetrics(md, ts, start)
	s.unschedulableMetric(md, ts, unschedulable)
	s.zoneMetrics(md, ts, zones)
	s.zoneFindings(now, zones)
	return md
}

func (s *state) coldStartMetrics(md pmetric.Metrics, ts, start pcommon.Timestamp) {
	byWorkload := map[workload][]histKey{}
	for k := range s.hists.series {
		byWorkload[k.w] = append(byWorkload[k.w], k)
	}
	ws := make([]workload, 0, len(byWorkload))
	for w := range byWorkload {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, compareWorkloads)
	for _, w := range ws {
		rm := md.ResourceMetrics().AppendEmpty()
		putWorkload(rm.Resource().Attributes(), w)
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(scopeName)
		m := sm.Metrics().AppendEmpty()
		describe(m, accelschema.MetricColdStartDuration)
		h := m.SetEmptyHistogram()
		h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		keys := byWorkload[w]
		slices.SortFunc(keys, func(a, b histKey) int {
			return slices.Index(accelschema.ColdStartPhases, a.phase) - slices.Index(accelschema.ColdStartPhases, b.phase)
		})
		for _, k := range keys {
			src := s.hists.series[k]
			dp := h.DataPoints().AppendEmpty()
			dp.SetStartTimestamp(start)
			dp.SetTimestamp(ts)
			dp.Attributes().PutStr(accelschema.AttrColdStartPhase, k.phase)
			dp.ExplicitBounds().FromRaw(s.hists.bounds)
			dp.BucketCounts().FromRaw(src.counts)
			dp.SetCount(src.count)
			dp.SetSum(src.sum)
			dp.SetMin(src.min)
			dp.SetMax(src.max)
		}
	}
}

// gaugeKey is one unschedulable series.
type gaugeKey struct {
	resource, instanceType, zone, source string
}

func (s *state) unschedulableMetric(md pmetric.Metrics, ts pcommon.Timestamp, pods []*corev1.Pod) {
	counts := map[gaugeKey]int64{}
	for _, p := range pods {
		place := lifecycle.PlacementOf(p)
		lacking := s.lacking[p.UID]
		if len(lacking) == 0 {
			lacking = s.match.Requested(p)
		}
		for _, res := range lacking {
			counts[gaugeKey{res, place.InstanceType, place.Zone, accelschema.CapacitySourceScheduler}]++
		}
	}
	s.claimCounts(counts)
	for k := range s.gaugeKeys {
		if _, ok := counts[k]; !ok {
			counts[k] = 0 // emitted once at 0, then dropped
		}
	}
	s.gaugeKeys = map[gaugeKey]bool{}
	if len(counts) == 0 {
		return
	}
	keys := make([]gaugeKey, 0, len(counts))
	for k, n := range counts {
		keys = append(keys, k)
		if n > 0 {
			s.gaugeKeys[k] = true
		}
	}
	slices.SortFunc(keys, func(a, b gaugeKey) int {
		return strings.Compare(a.resource+"\x00"+a.instanceType+"\x00"+a.zone+"\x00"+a.source, b.resource+"\x00"+b.instanceType+"\x00"+b.zone+"\x00"+b.source)
	})
	rm := md.ResourceMetrics().AppendEmpty()
	if s.cfg.ClusterName != "" {
		rm.Resource().Attributes().PutStr(accelschema.AttrK8sClusterName, s.cfg.ClusterName)
	}
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(scopeName)
	m := sm.Metrics().AppendEmpty()
	describe(m, accelschema.MetricPodsUnschedulable)
	g := m.SetEmptyGauge()
	for _, k := range keys {
		dp := g.DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetIntValue(counts[k])
		a := dp.Attributes()
		a.PutStr(accelschema.AttrCapacityResource, k.resource)
		a.PutStr(accelschema.AttrCapacityInstanceType, k.instanceType)
		a.PutStr(accelschema.AttrCapacityZone, k.zone)
		a.PutStr(accelschema.AttrCapacitySource, k.source)
	}
}

func podRecord(ld plog.Logs, w workload, p *corev1.Pod, at time.Time, event string) plog.LogRecord {
	rl := ld.ResourceLogs().AppendEmpty()
	ra := rl.Resource().Attributes()
	putWorkload(ra, w)
	ra.PutStr(accelschema.AttrK8sPodName, p.Name)
	ra.PutStr(accelschema.AttrK8sPodUID, string(p.UID))
	if p.Spec.NodeName != "" {
		ra.PutStr(accelschema.AttrK8sNodeName, p.Spec.NodeName)
	}
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(at))
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(at))
	lr.SetEventName(event)
	lr.Attributes().PutStr(accelschema.AttrEventName, event)
	return lr
}

// appendColdStart writes one record with every phase measured.
func appendColdStart(ld plog.Logs, w workload, p *corev1.Pod, requested []string, cs lifecycle.ColdStart) {
	lr := podRecord(ld, w, p, cs.Ready, accelschema.EventColdStart)
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	lr.SetSeverityText("INFO")
	var b strings.Builder
	b.WriteString("cold start of " + p.Namespace + "/" + p.Name + ":")
	for _, ph := range cs.Phases {
		lr.Attributes().PutDouble(accelschema.ColdStartPhaseAttr(ph.Name), ph.Seconds)
		b.WriteString(" " + ph.Name + "=" + time.Duration(ph.Seconds*float64(time.Second)).Round(time.Millisecond).String())
	}
	lr.Attributes().PutStr(accelschema.AttrCapacityResource, strings.Join(requested, ","))
	lr.Body().SetStr(b.String())
}

// appendUnschedulable writes one record per FailedScheduling occurrence.
func appendUnschedulable(ld plog.Logs, w workload, p *corev1.Pod, lacking []string, place lifecycle.Placement, e *corev1.Event) {
	lr := podRecord(ld, w, p, lifecycle.EventTime(e), accelschema.EventUnschedulable)
	lr.SetSeverityNumber(plog.SeverityNumberWarn)
	lr.SetSeverityText("WARN")
	a := lr.Attributes()
	a.PutStr(accelschema.AttrCapacityResource, strings.Join(lacking, ","))
	a.PutStr(accelschema.AttrCapacityInstanceType, place.InstanceType)
	a.PutStr(accelschema.AttrCapacityZone, place.Zone)
	a.PutStr(accelschema.AttrCapacitySource, accelschema.CapacitySourceScheduler)
	a.PutStr(accelschema.AttrK8sReason, e.Reason)
	lr.Body().SetStr(e.Message)
}
