// Package k8sstore keeps what the accelerator_k8s receiver and the latency
// diagnosis report about inference endpoints' lives on Kubernetes (issue
// 19), as this gateway receives it: cold-start histograms and records,
// scaling events, ready replicas per zone, unschedulable pods, zone
// imbalance and latency regression findings. It is bounded (the newest
// records of each kind, the series seen within the expiry) and answers the
// console's lifecycle view; it is fed from the pipelines whatever the
// backend, like the findings (Prometheus holds no logs, and the receiver's
// histograms are read here as they arrive).
package k8sstore // import "github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/k8sstore"

import (
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Workload is the resource of the receiver's series and records.
type Workload struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"workload"`
	Model     string `json:"model"`
}

func workloadOf(m pcommon.Map) Workload {
	return Workload{Cluster: str(m, s.AttrK8sClusterName), Namespace: str(m, s.AttrK8sNamespaceName),
		Name: str(m, s.AttrWorkloadName), Model: str(m, s.AttrGenAIRequestModel)}
}

// Phase is one cold-start phase of a workload, from its cumulative
// histogram: how many cold starts measured it, their mean, least and most.
type Phase struct {
	Phase   string   `json:"phase"`
	Count   uint64   `json:"count"`
	Mean    *float64 `json:"mean_seconds"`
	Min     *float64 `json:"min_seconds"`
	Max     *float64 `json:"max_seconds"`
	updated time.Time
}

// ColdStart is one accelerator_k8s cold-start record: every phase measured
// (seconds by phase name; a phase not measured is absent).
type ColdStart struct {
	Time      time.Time          `json:"time"`
	Pod       string             `json:"pod"`
	Node      string             `json:"node"`
	Resources string             `json:"resources"`
	Phases    map[string]float64 `json:"phases"`
	Workload
}

// Scaling is one replica change of an accelerator workload, settled.
type Scaling struct {
	Time            time.Time `json:"time"`
	From            int64     `json:"from"`
	To              int64     `json:"to"`
	Direction       string    `json:"direction"`
	Outcome         string    `json:"outcome"`
	DecisionToReady *float64  `json:"decision_to_ready_seconds"`
	Description     string    `json:"description"`
	Workload
}

// Unschedulable is one series of the unschedulable gauge: pods wanting
// resource in that instance type and zone that cannot be placed now.
type Unschedulable struct {
	Cluster      string    `json:"cluster"`
	Resource     string    `json:"resource"`
	InstanceType string    `json:"instance_type"`
	Zone         string    `json:"zone"`
	Source       string    `json:"source"`
	Pods         int64     `json:"pods"`
	Updated      time.Time `json:"updated"`
}

// UnschedulableEvent is one FailedScheduling (or Karpenter) record.
type UnschedulableEvent struct {
	Time         time.Time `json:"time"`
	Pod          string    `json:"pod"`
	Resource     string    `json:"resource"`
	InstanceType string    `json:"instance_type"`
	Zone         string    `json:"zone"`
	Source       string    `json:"source"`
	Reason       string    `json:"reason"`
	Message      string    `json:"message"`
	Workload
}

// Finding is a zone_imbalance or latency_regression finding as the
// lifecycle view shows it: the newest raise of each, with its cause.
type Finding struct {
	Kind      string    `json:"kind"`
	Cause     string    `json:"cause"`
	Evidence  string    `json:"evidence"`
	Action    string    `json:"action"`
	Summary   string    `json:"summary"`
	Pod       string    `json:"pod"`
	Node      string    `json:"node"`
	Endpoint  string    `json:"endpoint"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Count     int       `json:"count"`
	Workload
}

type phaseKey struct {
	w     Workload
	phase string
}

type zoneKey struct {
	w    Workload
	zone string
}

type replicas struct {
	n       int64
	updated time.Time
}

type gaugeKey struct{ cluster, resource, instanceType, zone, source string }

type findingKey struct {
	kind, cause, endpoint, pod string
	w                          Workload
}

// Store is the lifecycle model. The zero value is not usable; use New.
type Store struct {
	maxRecords int
	expiry     time.Duration
	now        func() time.Time

	mu            sync.Mutex
	phases        map[phaseKey]*Phase
	zones         map[zoneKey]replicas
	unschedulable map[gaugeKey]Unschedulable
	coldStarts    []ColdStart // newest last, at most maxRecords
	scalings      []Scaling
	events        []UnschedulableEvent
	findings      map[findingKey]*Finding
}

// New makes a store keeping maxRecords records of each kind and series
// seen within expiry.
func New(maxRecords int, expiry time.Duration) *Store {
	return &Store{maxRecords: maxRecords, expiry: expiry, now: time.Now,
		phases: map[phaseKey]*Phase{}, zones: map[zoneKey]replicas{}, unschedulable: map[gaugeKey]Unschedulable{},
		findings: map[findingKey]*Finding{}}
}

// SetClock replaces the clock that ages series (tests).
func (st *Store) SetClock(now func() time.Time) { st.mu.Lock(); st.now = now; st.mu.Unlock() }

// ConsumeMetrics takes the receiver's histograms and gauges; everything
// else is left alone (it is cheap to skip: one name comparison a metric).
func (st *Store) ConsumeMetrics(md pmetric.Metrics) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		res := rm.Resource().Attributes()
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				switch m.Name() {
				case s.MetricColdStartDuration:
					if m.Type() == pmetric.MetricTypeHistogram {
						st.coldStartHistogram(workloadOf(res), m.Histogram())
					}
				case s.MetricWorkloadReplicas:
					if m.Type() == pmetric.MetricTypeGauge {
						st.replicaGauge(workloadOf(res), str(res, s.AttrCloudZone), m.Gauge())
					}
				case s.MetricPodsUnschedulable:
					if m.Type() == pmetric.MetricTypeGauge {
						st.unschedulableGauge(str(res, s.AttrK8sClusterName), m.Gauge())
					}
				}
			}
		}
	}
}

func (st *Store) coldStartHistogram(w Workload, h pmetric.Histogram) {
	st.mu.Lock()
	defer st.mu.Unlock()
	dps := h.DataPoints()
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		phase := str(dp.Attributes(), s.AttrColdStartPhase)
		if phase == "" {
			continue
		}
		at := dp.Timestamp().AsTime()
		k := phaseKey{w, phase}
		if old, ok := st.phases[k]; ok && at.Before(old.updated) {
			continue // an older point arriving late
		}
		p := &Phase{Phase: phase, Count: dp.Count(), updated: at}
		if dp.Count() > 0 {
			p.Mean = ptr(fleet.Round4(dp.Sum() / float64(dp.Count())))
			if dp.HasMin() {
				p.Min = ptr(fleet.Round4(dp.Min()))
			}
			if dp.HasMax() {
				p.Max = ptr(fleet.Round4(dp.Max()))
			}
		}
		st.phases[k] = p
	}
}

func (st *Store) replicaGauge(w Workload, zone string, g pmetric.Gauge) {
	st.mu.Lock()
	defer st.mu.Unlock()
	dps := g.DataPoints()
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		st.zones[zoneKey{w, zone}] = replicas{n: intValue(dp), updated: dp.Timestamp().AsTime()}
	}
}

func (st *Store) unschedulableGauge(cluster string, g pmetric.Gauge) {
	st.mu.Lock()
	defer st.mu.Unlock()
	dps := g.DataPoints()
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		a := dp.Attributes()
		k := gaugeKey{cluster, str(a, s.AttrCapacityResource), str(a, s.AttrCapacityInstanceType), str(a, s.AttrCapacityZone), str(a, s.AttrCapacitySource)}
		n := intValue(dp)
		if n <= 0 {
			// The receiver emits a series that empties once at 0.
			delete(st.unschedulable, k)
			continue
		}
		st.unschedulable[k] = Unschedulable{Cluster: k.cluster, Resource: k.resource, InstanceType: k.instanceType, Zone: k.zone,
			Source: k.source, Pods: n, Updated: dp.Timestamp().AsTime().UTC()}
	}
}

// ConsumeLogs takes the receiver's records and the zone and latency
// findings; health events and other findings are the logstore's.
func (st *Store) ConsumeLogs(ld plog.Logs) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes()
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				switch eventName(lr) {
				case s.EventColdStart:
					st.addColdStart(res, lr)
				case s.EventScaling:
					st.addScaling(res, lr)
				case s.EventUnschedulable:
					st.addUnschedulable(res, lr)
				case s.EventFinding:
					kind := str(lr.Attributes(), s.AttrFindingKind)
					if kind == s.FindingZoneImbalance || kind == s.FindingLatencyRegression {
						st.addFinding(kind, res, lr)
					}
				}
			}
		}
	}
}

func (st *Store) addColdStart(res pcommon.Map, lr plog.LogRecord) {
	c := ColdStart{Time: recordTime(lr), Workload: workloadOf(res), Pod: str(res, s.AttrK8sPodName), Node: str(res, s.AttrK8sNodeName),
		Resources: str(lr.Attributes(), s.AttrCapacityResource), Phases: map[string]float64{}}
	for _, ph := range s.ColdStartPhases {
		if v, ok := number(lr.Attributes(), s.ColdStartPhaseAttr(ph)); ok {
			c.Phases[ph] = fleet.Round4(v)
		}
	}
	st.mu.Lock()
	st.coldStarts = bounded(append(st.coldStarts, c), st.maxRecords)
	st.mu.Unlock()
}

func (st *Store) addScaling(res pcommon.Map, lr plog.LogRecord) {
	a := lr.Attributes()
	from, _ := number(a, s.AttrScalingFrom)
	to, _ := number(a, s.AttrScalingTo)
	sc := Scaling{Time: recordTime(lr), Workload: workloadOf(res), From: int64(from), To: int64(to),
		Direction: str(a, s.AttrScalingDirection), Outcome: str(a, s.AttrScalingOutcome), Description: lr.Body().AsString()}
	if v, ok := number(a, s.AttrScalingDecisionToReady); ok {
		sc.DecisionToReady = ptr(fleet.Round4(v))
	}
	st.mu.Lock()
	st.scalings = bounded(append(st.scalings, sc), st.maxRecords)
	st.mu.Unlock()
}

func (st *Store) addUnschedulable(res pcommon.Map, lr plog.LogRecord) {
	a := lr.Attributes()
	e := UnschedulableEvent{Time: recordTime(lr), Workload: workloadOf(res), Pod: str(res, s.AttrK8sPodName),
		Resource: str(a, s.AttrCapacityResource), InstanceType: str(a, s.AttrCapacityInstanceType), Zone: str(a, s.AttrCapacityZone),
		Source: str(a, s.AttrCapacitySource), Reason: str(a, s.AttrK8sReason), Message: lr.Body().AsString()}
	st.mu.Lock()
	st.events = bounded(append(st.events, e), st.maxRecords)
	st.mu.Unlock()
}

func (st *Store) addFinding(kind string, res pcommon.Map, lr plog.LogRecord) {
	a := lr.Attributes()
	endpoint := str(res, s.AttrServerAddress)
	if port := str(res, s.AttrServerPort); endpoint != "" && port != "" {
		endpoint += ":" + port
	}
	k := findingKey{kind: kind, cause: str(a, s.AttrFindingCause), endpoint: endpoint, pod: str(res, s.AttrK8sPodName), w: workloadOf(res)}
	t := recordTime(lr)
	st.mu.Lock()
	defer st.mu.Unlock()
	f, ok := st.findings[k]
	if !ok {
		if len(st.findings) >= st.maxRecords {
			st.dropOldestFinding()
		}
		f = &Finding{Kind: kind, Cause: k.cause, Endpoint: endpoint, Pod: k.pod, Workload: k.w, FirstSeen: t}
		st.findings[k] = f
	}
	f.Count++
	if t.Before(f.FirstSeen) {
		f.FirstSeen = t
	}
	if !t.Before(f.LastSeen) {
		f.LastSeen = t
		f.Evidence, f.Action, f.Summary = str(a, s.AttrFindingEvidence), str(a, s.AttrFindingAction), lr.Body().AsString()
		f.Node = str(res, s.AttrK8sNodeName)
	}
}

func (st *Store) dropOldestFinding() {
	var oldest findingKey
	var at time.Time
	first := true
	for k, f := range st.findings {
		if first || f.LastSeen.Before(at) {
			oldest, at, first = k, f.LastSeen, false
		}
	}
	delete(st.findings, oldest)
}

// Snapshot is the store at one moment, sorted, series past the expiry
// left out (and forgotten).
type Snapshot struct {
	// Phases are the cold-start phases per workload, in phase order.
	Phases        []WorkloadPhases
	ColdStarts    []ColdStart // newest first
	Scalings      []Scaling   // newest first
	Zones         []WorkloadZones
	Unschedulable []Unschedulable
	Events        []UnschedulableEvent // newest first
	Findings      []Finding            // newest first
}

// WorkloadPhases is one workload's cold-start anatomy.
type WorkloadPhases struct {
	Workload
	Phases []Phase
}

// WorkloadZones is one workload's ready replicas by zone.
type WorkloadZones struct {
	Workload
	Zones map[string]int64
}

// Snapshot copies the store.
func (st *Store) Snapshot() Snapshot {
	st.mu.Lock()
	defer st.mu.Unlock()
	cut := st.now().Add(-st.expiry)
	var out Snapshot
	byW := map[Workload][]Phase{}
	for k, p := range st.phases {
		if p.updated.Before(cut) {
			delete(st.phases, k)
			continue
		}
		byW[k.w] = append(byW[k.w], *p)
	}
	for w, ps := range byW {
		sort.Slice(ps, func(i, j int) bool { return phaseIndex(ps[i].Phase) < phaseIndex(ps[j].Phase) })
		out.Phases = append(out.Phases, WorkloadPhases{Workload: w, Phases: ps})
	}
	sort.Slice(out.Phases, func(i, j int) bool { return less(out.Phases[i].Workload, out.Phases[j].Workload) })

	zs := map[Workload]map[string]int64{}
	for k, r := range st.zones {
		if r.updated.Before(cut) {
			delete(st.zones, k)
			continue
		}
		if zs[k.w] == nil {
			zs[k.w] = map[string]int64{}
		}
		zs[k.w][k.zone] = r.n
	}
	for w, z := range zs {
		out.Zones = append(out.Zones, WorkloadZones{Workload: w, Zones: z})
	}
	sort.Slice(out.Zones, func(i, j int) bool { return less(out.Zones[i].Workload, out.Zones[j].Workload) })

	for k, u := range st.unschedulable {
		if u.Updated.Before(cut) {
			delete(st.unschedulable, k)
			continue
		}
		out.Unschedulable = append(out.Unschedulable, u)
	}
	sort.Slice(out.Unschedulable, func(i, j int) bool {
		a, b := out.Unschedulable[i], out.Unschedulable[j]
		return strings.Join([]string{a.Cluster, a.Resource, a.InstanceType, a.Zone, a.Source}, "\x00") <
			strings.Join([]string{b.Cluster, b.Resource, b.InstanceType, b.Zone, b.Source}, "\x00")
	})

	out.ColdStarts = newestFirst(st.coldStarts)
	out.Scalings = newestFirst(st.scalings)
	out.Events = newestFirst(st.events)
	for _, f := range st.findings {
		out.Findings = append(out.Findings, *f)
	}
	sort.Slice(out.Findings, func(i, j int) bool {
		a, b := out.Findings[i], out.Findings[j]
		if !a.LastSeen.Equal(b.LastSeen) {
			return a.LastSeen.After(b.LastSeen)
		}
		return less(a.Workload, b.Workload) || (a.Workload == b.Workload && a.Kind+a.Cause+a.Endpoint+a.Pod < b.Kind+b.Cause+b.Endpoint+b.Pod)
	})
	return out
}

func newestFirst[T any](in []T) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[len(in)-1-i] = v
	}
	return out
}

func bounded[T any](in []T, n int) []T {
	if len(in) <= n {
		return in
	}
	return append(in[:0:0], in[len(in)-n:]...)
}

func phaseIndex(p string) int {
	for i, x := range s.ColdStartPhases {
		if x == p {
			return i
		}
	}
	return len(s.ColdStartPhases)
}

func less(a, b Workload) bool {
	return strings.Join([]string{a.Cluster, a.Namespace, a.Name, a.Model}, "\x00") <
		strings.Join([]string{b.Cluster, b.Namespace, b.Name, b.Model}, "\x00")
}

func eventName(lr plog.LogRecord) string {
	if n := lr.EventName(); n != "" {
		return n
	}
	return str(lr.Attributes(), s.AttrEventName)
}

func recordTime(lr plog.LogRecord) time.Time {
	t := lr.Timestamp()
	if t == 0 {
		t = lr.ObservedTimestamp()
	}
	return t.AsTime().UTC()
}

func str(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return v.AsString()
}

func number(m pcommon.Map, key string) (float64, bool) {
	v, ok := m.Get(key)
	if !ok {
		return 0, false
	}
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return v.Double(), true
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	}
	return 0, false
}

func intValue(dp pmetric.NumberDataPoint) int64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeDouble {
		return int64(dp.DoubleValue())
	}
	return dp.IntValue()
}

func ptr(v float64) *float64 { return &v }
