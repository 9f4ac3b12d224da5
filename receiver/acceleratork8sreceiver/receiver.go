package acceleratork8sreceiver

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/firstrequest"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver/internal/lifecycle"
)

// logInterval is how often one persisting problem is logged again.
const logInterval = 5 * time.Minute

// maxTracked bounds what is kept per pod (pulls of pods not seen yet,
// cold starts in progress): a cluster's worth of pending pods, not more.
const maxTracked = 20000

// k8sReceiver follows accelerator pods through the shared informers and
// turns what it sees into cold starts and unschedulable counts.
type k8sReceiver struct {
	cfg      *Config
	set      receiver.Settings
	registry *k8sclient.Registry
	now      func() time.Time
	match    lifecycle.Matcher
	rl       *componenthealth.Logger

	metrics consumer.Metrics
	logs    consumer.Logs

	informers *k8sclient.Informers
	pods      cache.SharedIndexInformer
	events    cache.SharedIndexInformer
	nodes     cache.SharedIndexInformer

	mu    sync.Mutex
	state *state

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newReceiver(cfg *Config, set receiver.Settings, registry *k8sclient.Registry, first *firstrequest.Registry, now func() time.Time) *k8sReceiver {
	return &k8sReceiver{cfg: cfg, set: set, registry: registry, now: now, match: lifecycle.NewMatcher(cfg.Resources),
		rl: componenthealth.NewLogger(set.Logger, logInterval), state: newState(cfg, first, now())}
}

// Start acquires the node's (or the cluster's) pod and event informers from
// the shared registry and registers the handlers; the API being away does
// not fail the start: the informers retry and say why.
func (r *k8sReceiver) Start(_ context.Context, _ component.Host) error {
	inf, err := r.registry.Acquire(r.cfg.APIConfig, r.cfg.NodeName)
	if err != nil {
		return err
	}
	r.informers = inf
	if r.pods, err = inf.Informer(k8sclient.Pods); err == nil {
		r.events, err = inf.Informer(k8sclient.Events)
	}
	if err == nil {
		r.nodes, err = inf.Informer(k8sclient.Nodes)
	}
	if err == nil {
		err = inf.AddEventHandler(k8sclient.Pods, cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { r.onPod(o) },
			UpdateFunc: func(_, o any) { r.onPod(o) },
			DeleteFunc: r.onPodGone,
		})
	}
	if err == nil {
		err = inf.AddEventHandler(k8sclient.Events, cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { r.onEvent(o) },
			UpdateFunc: func(_, o any) { r.onEvent(o) },
		})
	}
	for _, kind := range []k8sclient.Kind{k8sclient.Deployments, k8sclient.StatefulSets} {
		if err != nil {
			break
		}
		if _, err = inf.Informer(kind); err == nil {
			err = inf.AddEventHandler(kind, cache.ResourceEventHandlerFuncs{
				AddFunc:    func(o any) { r.onWorkload(o) },
				UpdateFunc: func(_, o any) { r.onWorkload(o) },
				DeleteFunc: r.onWorkloadGone,
			})
		}
	}
	if err != nil {
		inf.Release()
		return err
	}
	r.watchOptional(inf)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(1)
	go r.loop(ctx)
	return nil
}

// Shutdown stops the loop, emits what is queued, and lets go of the informers.
func (r *k8sReceiver) Shutdown(ctx context.Context) error {
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
	var err error
	if r.informers != nil {
		err = r.flush(ctx)
		r.informers.Release()
	}
	return err
}

func (r *k8sReceiver) loop(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.CollectionInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := r.flush(ctx); err != nil {
				r.rl.Warn("consume", "accelerator_k8s: the next component refused a batch", zap.Error(err))
			}
			r.logProblems()
		}
	}
}

// flush emits the histograms and gauges, and the log records queued since
// the last flush.
func (r *k8sReceiver) flush(ctx context.Context) error {
	now := r.now()
	r.mu.Lock()
	r.settlePending(now, nil)
	md := r.state.metrics(now, r.unschedulablePods(), r.readZones())
	ld := r.state.takeLogs()
	r.mu.Unlock()
	var errs []error
	if r.metrics != nil && md.DataPointCount() > 0 {
		errs = append(errs, r.metrics.ConsumeMetrics(ctx, md))
	}
	if r.logs != nil && ld.LogRecordCount() > 0 {
		errs = append(errs, r.logs.ConsumeLogs(ctx, ld))
	}
	return errors.Join(errs...)
}

// unschedulablePods are the accelerator pods the scheduler cannot place now.
func (r *k8sReceiver) unschedulablePods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range r.pods.GetStore().List() {
		if p, ok := o.(*corev1.Pod); ok && lifecycle.Unschedulable(p) && len(r.match.Requested(p)) > 0 {
			out = append(out, p)
		}
	}
	return out
}

func (r *k8sReceiver) onPod(o any) {
	p, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	requested := r.match.Requested(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(requested) == 0 {
		delete(r.state.heldFailed, p.UID) // a CPU pod's event: not ours
		return
	}
	r.state.observePod(p, requested)
	if len(r.state.pendingSettle) > 0 && lifecycle.IsReady(p) {
		pw := workloadOf(p, r.cfg)
		k := workloadKey{pw.kind, pw.namespace, pw.name}
		r.settlePending(r.now(), &k)
	}
}

func (r *k8sReceiver) onPodGone(o any) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	if p, ok := o.(*corev1.Pod); ok {
		r.mu.Lock()
		r.state.forget(p.UID)
		r.mu.Unlock()
	}
}

func (r *k8sReceiver) onEvent(o any) {
	e, ok := o.(*corev1.Event)
	if !ok || e.InvolvedObject.Kind != "Pod" {
		return
	}
	switch e.Reason {
	case "Pulled", "FailedScheduling":
	default:
		return
	}
	// The pod, when the informer has it: events of pods that hold no
	// accelerator are not kept.
	var pod *corev1.Pod
	if obj, exists, err := r.pods.GetStore().GetByKey(e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name); err == nil && exists {
		if p, ok := obj.(*corev1.Pod); ok && p.UID == e.InvolvedObject.UID {
			pod = p
		}
	}
	var requested []string
	if pod != nil {
		if requested = r.match.Requested(pod); len(requested) == 0 {
			return
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Reason {
	case "Pulled":
		r.state.observePull(e.InvolvedObject.UID, e)
	case "FailedScheduling":
		if pod != nil {
			r.state.observeFailedScheduling(pod, requested, e, r.match)
			return
		}
		// The two watches do not keep order between them: the event can
		// come before its pod, which then picks it up (observePod).
		r.state.holdFailedScheduling(e)
	}
}

func (r *k8sReceiver) onWorkload(o any) {
	obj, ok := o.(runtime.Object)
	if !ok {
		return
	}
	w, ok := lifecycle.WorkloadOf(obj)
	if !ok || len(r.match.RequestedByTemplate(w)) == 0 {
		return
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state.observeWorkload(w, now, func() (time.Time, int32) { return r.lastReady(w) })
}

// settlePending looks again at the scale-ups waiting for their pods: on
// a pod of theirs (key set) or at a flush (every one, for settleWait).
// Called with r.mu held.
func (r *k8sReceiver) settlePending(now time.Time, only *workloadKey) {
	for k, p := range r.state.pendingSettle {
		if only != nil && k != *only {
			continue
		}
		w := p.w
		r.state.observeWorkload(w, now, func() (time.Time, int32) { return r.lastReady(w) })
	}
}

// lastReady is when the last of the workload's Ready pods turned Ready,
// and how many are Ready.
func (r *k8sReceiver) lastReady(w lifecycle.Workload) (time.Time, int32) {
	var last time.Time
	var n int32
	for _, o := range r.pods.GetStore().List() {
		p, ok := o.(*corev1.Pod)
		if !ok || p.Namespace != w.Namespace {
			continue
		}
		if pw := workloadOf(p, r.cfg); pw.kind != w.Kind || pw.name != w.Name {
			continue
		}
		if at, ok := lifecycle.ReadySince(p); ok {
			n++
			if at.After(last) {
				last = at
			}
		}
	}
	return last, n
}

func (r *k8sReceiver) onWorkloadGone(o any) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	if obj, ok := o.(runtime.Object); ok {
		if w, ok := lifecycle.WorkloadOf(obj); ok {
			r.mu.Lock()
			r.state.forgetWorkload(w.Kind, w.Namespace, w.Name)
			r.mu.Unlock()
		}
	}
}

// logProblems says, rate-limited, which watches fail and what to do (a
// refused verb names the ClusterRole rule to add).
func (r *k8sReceiver) logProblems() {
	for _, p := range r.informers.Problems() {
		r.rl.Warn("watch/"+string(p.Kind), "accelerator_k8s: the watch of "+string(p.Kind)+" fails: "+p.Hint, zap.Error(p.Err))
	}
}
