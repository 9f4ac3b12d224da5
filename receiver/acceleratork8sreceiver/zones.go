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

var zoneLabels = []string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}

func zoneOf(n *corev1.Node) string {
	for _, k := range zoneLabels {
		if v := n.Labels[k]; v != "" {
			return v
		}
	}
	return ""
}

// zoneView is what the zone rule reads at one flush: ready accelerator
// pods with their workload and zone, and the zones whose nodes offer each
// accelerator resource.
type zoneView struct {
	replicas map[workload]lifecycle.ZoneCounts
	// requested by workload, to add the zones that could hold its replicas.
	requested map[workload][]string
	offering  map[string]map[string]bool // resource → zones
}

// readZones walks the pod and node stores.
func (r *k8sReceiver) readZones() zoneView {
	v := zoneView{replicas: map[workload]lifecycle.ZoneCounts{}, requested: map[workload][]string{}, offering: map[string]map[string]bool{}}
	zones := map[string]string{}
	for _, o := range r.nodes.GetStore().List() {
		n, ok := o.(*corev1.Node)
		if !ok {
			continue
		}
		zone := zoneOf(n)
		if zone == "" {
			continue
		}
		zones[n.Name] = zone
		for name, q := range n.Status.Allocatable {
			if r.match.Is(string(name)) && !q.IsZero() {
				if v.offering[string(name)] == nil {
					v.offering[string(name)] = map[string]bool{}
				}
				v.offering[string(name)][zone] = true
			}
		}
	}
	for _, o := range r.pods.GetStore().List() {
		p, ok := o.(*corev1.Pod)
		if !ok || p.Status.Phase != corev1.PodRunning || !lifecycle.IsReady(p) {
			continue
		}
		requested := r.match.Requested(p)
		zone := zones[p.Spec.NodeName]
		if len(requested) == 0 || zone == "" {
			continue
		}
		w := workloadOf(p, r.cfg)
		if v.replicas[w] == nil {
			v.replicas[w] = lifecycle.ZoneCounts{}
			v.requested[w] = requested
		}
		v.replicas[w][zone]++
	}
	// A zone that offers every resource a workload requests but holds none
	// of its replicas counts as 0.
	for w, counts := range v.replicas {
		var candidates map[string]bool
		for _, res := range v.requested[w] {
			offered := v.offering[res]
			if candidates == nil {
				candidates = map[string]bool{}
				for z := range offered {
					candidates[z] = true
				}
				continue
			}
			for z := range candidates {
				if !offered[z] {
					delete(candidates, z)
				}
			}
		}
		for z := range candidates {
			if _, ok := counts[z]; !ok {
				counts[z] = 0
			}
		}
	}
	return v
}

// zoneMetrics emits each accelerator workload's ready replicas per zone,
// one resource per workload and zone (cloud.availability_zone, as the
// inference servers' own series carry it, so request rate and latency per
// zone are the same grouping).
func (s *state) zoneMetrics(md pmetric.Metrics, ts pcommon.Timestamp, v zoneView) {
	ws := make([]workload, 0, len(v.replicas))
	for w := range v.replicas {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, compareWorkloads)
	for _, w := range ws {
		zones := make([]string, 0, len(v.replicas[w]))
		for z := range v.replicas[w] {
			zones = append(zones, z)
		}
		slices.Sort(zones)
		for _, z := range zones {
			rm := md.ResourceMetrics().AppendEmpty()
			putWorkload(rm.Resource().Attributes(), w)
			rm.Resource().Attributes().PutStr(accelschema.AttrCloudZone, z)
			sm := rm.ScopeMetrics().AppendEmpty()
			sm.Scope().SetName(scopeName)
			m := sm.Metrics().AppendEmpty()
			describe(m, accelschema.MetricWorkloadReplicas)
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetIntValue(int64(v.replicas[w][z]))
		}
	}
}

// zoneFindings raises a zone_imbalance finding when a workload becomes
// unbalanced, or its counts change while it is; nothing while it stays as
// it was, and it may be raised again once it was balanced.
func (s *state) zoneFindings(now time.Time, v zoneView) {
	for w, counts := range v.replicas {
		evidence, bad := counts.Imbalance()
		if !bad {
			delete(s.imbalanced, w)
			continue
		}
		if s.imbalanced[w] == evidence {
			continue
		}
		s.imbalanced[w] = evidence
		appendZoneFinding(s.logs, w, evidence, now)
	}
	for w := range s.imbalanced {
		if _, ok := v.replicas[w]; !ok {
			delete(s.imbalanced, w)
		}
	}
}

func appendZoneFinding(ld plog.Logs, w workload, evidence string, now time.Time) {
	rl := ld.ResourceLogs().AppendEmpty()
	putWorkload(rl.Resource().Attributes(), w)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(now))
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(now))
	lr.SetSeverityNumber(plog.SeverityNumberWarn)
	lr.SetSeverityText("WARN")
	lr.SetEventName(accelschema.EventFinding)
	const action = "spread the replicas across zones: a topologySpreadConstraint on topology.kubernetes.io/zone (maxSkew 1), " +
		"and accelerator capacity (node pool or Karpenter NodePool) in every zone the endpoint serves"
	a := lr.Attributes()
	a.PutStr(accelschema.AttrEventName, accelschema.EventFinding)
	a.PutStr(accelschema.AttrFindingKind, accelschema.FindingZoneImbalance)
	a.PutStr(accelschema.AttrFindingEvidence, evidence)
	a.PutStr(accelschema.AttrFindingAction, action)
	lr.Body().SetStr(accelschema.FindingZoneImbalance + ": " + w.namespace + "/" + w.name + " " + strings.ReplaceAll(evidence, "replicas_", "") + "; " + action)
}

func compareWorkloads(a, b workload) int {
	return strings.Compare(a.namespace+"/"+a.kind+"/"+a.name+"/"+a.model, b.namespace+"/"+b.kind+"/"+b.name+"/"+b.model)
}
