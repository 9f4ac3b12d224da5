package acceleratork8sreceiver

import (
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-accel/otelcol-accel/internal/firstrequest"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver/internal/lifecycle"
)

// state is what the handlers learn, guarded by the receiver's mutex.
type state struct {
	cfg   *Config
	match lifecycle.Matcher
	// first is where the inference receiver of this process records each
	// pod's first finished request; cold starts wait for it in awaiting.
	first    *firstrequest.Registry
	awaiting map[types.UID]*coldStartRecord
	start    time.Time
	// pods in progress: seen not Ready, so their becoming Ready is a cold
	// start observed here (a pod already Ready when first seen started
	// before this collector did, and is not measured).
	waiting map[types.UID]bool
	// measured pods are not measured again (a pod that turns unready and
	// ready again is not starting cold).
	measured map[types.UID]bool
	// pulls by pod, then by event UID (an event updated in place is one pull).
	pulls map[types.UID]map[types.UID]lifecycle.Pull
	// lacking: the accelerator resources the scheduler's last message
	// about the pod said it lacks.
	lacking map[types.UID][]string
	// failedSeen: FailedScheduling events already logged, by event UID, at
	// their count (the scheduler updates one event as it retries).
	failedSeen map[types.UID]int32
	hists      *histograms
	// gaugeKeys were emitted last time, so that a count that falls to
	// nothing is emitted once as 0.
	gaugeKeys map[gaugeKey]bool
	logs      plog.Logs
	// desired replicas by workload, and scalings in progress (scaling.go).
	desired  map[workloadKey]int32
	scalings map[workloadKey]scaling
	// heldFailed: FailedScheduling events whose pod was not in the
	// informer yet, by pod UID.
	heldFailed map[types.UID]*corev1.Event
	// imbalanced workloads, with the evidence last raised (zones.go).
	imbalanced map[workload]string
	// templates: the pod-template labels of each accelerator workload.
	templates map[workloadKey]map[string]string
	// hpas by namespace/name, and the HPA of each target (autoscaler.go).
	hpas  map[autoscalerKey]lifecycle.Autoscaler
	hpaOf map[workloadKey]autoscalerKey
	// claims: Karpenter NodeClaims for accelerators that could not be
	// launched, by UID; claimsGone were deleted since the last flush;
	// claimLogged by UID and reason (nodeclaims.go).
	claims      map[string]lifecycle.NodeClaim
	claimsGone  map[string]lifecycle.NodeClaim
	claimLogged map[string]bool
	// pendingSettle: scale-ups waiting for their Ready pods (scaling.go).
	pendingSettle map[workloadKey]pendingSettle
}

func newState(cfg *Config, first *firstrequest.Registry, start time.Time) *state {
	return &state{cfg: cfg, match: lifecycle.NewMatcher(cfg.Resources), first: first, awaiting: map[types.UID]*coldStartRecord{}, start: start, waiting: map[types.UID]bool{}, measured: map[types.UID]bool{},
		pulls: map[types.UID]map[types.UID]lifecycle.Pull{}, lacking: map[types.UID][]string{}, failedSeen: map[types.UID]int32{},
		hists: newHistograms(cfg.Buckets), gaugeKeys: map[gaugeKey]bool{}, logs: plog.NewLogs(),
		desired: map[workloadKey]int32{}, scalings: map[workloadKey]scaling{}, imbalanced: map[workload]string{}, heldFailed: map[types.UID]*corev1.Event{},
		templates: map[workloadKey]map[string]string{}, hpas: map[autoscalerKey]lifecycle.Autoscaler{}, hpaOf: map[workloadKey]autoscalerKey{},
		claims: map[string]lifecycle.NodeClaim{}, claimsGone: map[string]lifecycle.NodeClaim{}, claimLogged: map[string]bool{}, pendingSettle: map[workloadKey]pendingSettle{}}
}

func (s *state) observePod(p *corev1.Pod, requested []string) {
	if e, ok := s.heldFailed[p.UID]; ok {
		delete(s.heldFailed, p.UID)
		s.observeFailedScheduling(p, requested, e, s.match)
	}
	if s.measured[p.UID] {
		return
	}
	if !lifecycle.IsReady(p) {
		if len(s.waiting) < maxTracked {
			s.waiting[p.UID] = true
		}
		return
	}
	if !s.waiting[p.UID] {
		s.measured[p.UID] = true
		return
	}
	var pulls []lifecycle.Pull
	for _, pl := range s.pulls[p.UID] {
		pulls = append(pulls, pl)
	}
	cs, ok := lifecycle.Measure(p, pulls)
	if !ok {
		return
	}
	delete(s.waiting, p.UID)
	delete(s.pulls, p.UID)
	s.measured[p.UID] = true
	rec := &coldStartRecord{w: workloadOf(p, s.cfg), pod: p, requested: requested, cs: cs}
	if s.first != nil && s.first.HasProducer() && s.cfg.FirstRequestWait > 0 {
		s.awaiting[p.UID] = rec
		s.settleFirstRequests(cs.Ready) // already served, as a pod with traffic waiting may be
		return
	}
	s.report(rec)
}

// coldStartRecord is a measured cold start not yet reported.
type coldStartRecord struct {
	w         workload
	pod       *corev1.Pod
	requested []string
	cs        lifecycle.ColdStart
}

// settleFirstRequests reports the cold starts whose first request is now
// known, and those that waited first_request_wait without one.
func (s *state) settleFirstRequests(now time.Time) {
	for uid, rec := range s.awaiting {
		first, ok := s.first.First(string(uid))
		switch {
		case ok:
			rec.cs.AddFirstRequest(first)
		case now.Sub(rec.cs.Ready) < s.cfg.FirstRequestWait:
			continue
		}
		delete(s.awaiting, uid)
		s.report(rec)
	}
}

func (s *state) report(rec *coldStartRecord) {
	for _, ph := range rec.cs.Phases {
		s.hists.observe(rec.w, ph.Name, ph.Seconds)
	}
	appendColdStart(s.logs, rec.w, rec.pod, rec.requested, rec.cs)
}

func (s *state) observePull(pod types.UID, e *corev1.Event) {
	if s.measured[pod] {
		return
	}
	m := s.pulls[pod]
	if m == nil {
		if len(s.pulls) >= maxTracked {
			return
		}
		m = map[types.UID]lifecycle.Pull{}
		s.pulls[pod] = m
	}
	m[e.UID] = lifecycle.ParsePull(e)
}

func (s *state) observeFailedScheduling(p *corev1.Pod, requested []string, e *corev1.Event, match lifecycle.Matcher) {
	lacking := match.Lacking(requested, e.Message)
	s.lacking[p.UID] = lacking
	count := max(e.Count, 1)
	if seen, ok := s.failedSeen[e.UID]; ok && seen >= count {
		return
	}
	if len(s.failedSeen) < maxTracked {
		s.failedSeen[e.UID] = count
	}
	appendUnschedulable(s.logs, workloadOf(p, s.cfg), p, lacking, lifecycle.PlacementOf(p), e)
}

// holdFailedScheduling keeps the latest FailedScheduling event of a pod
// the informer has not delivered yet.
func (s *state) holdFailedScheduling(e *corev1.Event) {
	if _, ok := s.heldFailed[e.InvolvedObject.UID]; ok || len(s.heldFailed) < maxTracked {
		s.heldFailed[e.InvolvedObject.UID] = e
	}
}

func (s *state) forget(uid types.UID) {
	delete(s.heldFailed, uid)
	delete(s.awaiting, uid)
	delete(s.waiting, uid)
	delete(s.measured, uid)
	delete(s.pulls, uid)
	delete(s.lacking, uid)
}

// takeLogs hands over the queued records.
func (s *state) takeLogs() plog.Logs {
	ld := s.logs
	s.logs = plog.NewLogs()
	return ld
}

// workload is who a pod belongs to, the resource of its series.
type workload struct {
	namespace, kind, name, model, cluster string
}

// workloadOf names the pod's controller as a person would: a
// Deployment (its ReplicaSet less the pod-template-hash), a StatefulSet, a
// LeaderWorkerSet, else the owner, else the pod.
func workloadOf(p *corev1.Pod, cfg *Config) workload {
	w := workload{namespace: p.Namespace, kind: "Pod", name: p.Name, cluster: cfg.ClusterName}
	if lws := p.Labels["leaderworkerset.sigs.k8s.io/name"]; lws != "" {
		w.kind, w.name = "LeaderWorkerSet", lws
	} else {
		for _, o := range p.OwnerReferences {
			if o.Controller == nil || !*o.Controller {
				continue
			}
			w.kind, w.name = o.Kind, o.Name
			if hash := p.Labels["pod-template-hash"]; o.Kind == "ReplicaSet" && hash != "" {
				if dep, ok := strings.CutSuffix(o.Name, "-"+hash); ok {
					w.kind, w.name = "Deployment", dep
				}
			}
		}
	}
	w.model = modelOf(p.Labels, p.Annotations, cfg.ModelLabels)
	return w
}

// modelOf reads the first model label, or annotation, found.
func modelOf(labels, annotations map[string]string, keys []string) string {
	for _, k := range keys {
		if v := labels[k]; v != "" {
			return v
		}
		if v := annotations[k]; v != "" {
			return v
		}
	}
	return ""
}
