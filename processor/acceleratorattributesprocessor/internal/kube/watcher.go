package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	coreinformers "k8s.io/client-go/informers/core/v1"
	resourceinformers "k8s.io/client-go/informers/resource/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Snapshot is what the watcher knows now. The objects belong to the
// informers' caches: read them, never change them.
type Snapshot struct {
	Pods   []*corev1.Pod
	Node   *corev1.Node
	Claims []*resourcev1.ResourceClaim
	Slices []*resourcev1.ResourceSlice
	// DRA is false when the API server does not serve resource.k8s.io/v1
	// (Kubernetes before 1.34) or DRA watching is off.
	DRA bool
}

// Problem is one watch that does not work, with what to do about it.
type Problem struct {
	Resource string
	Err      error
	Hint     string
}

// Watcher runs the informers.
type Watcher struct {
	client   kubernetes.Interface
	nodeName string
	wantDRA  bool

	changed chan struct{}
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu        sync.Mutex
	informers []*watched
	draServed bool
	pods      cache.SharedIndexInformer
	nodes     cache.SharedIndexInformer
	claims    cache.SharedIndexInformer
	slices    cache.SharedIndexInformer
}

type watched struct {
	resource string // "pods", "nodes", "resourceclaims", "resourceslices"
	group    string
	informer cache.SharedIndexInformer

	mu      sync.Mutex
	err     error
	errRV   string // LastSyncResourceVersion when err happened
	errTime time.Time
}

// NewWatcher prepares informers for nodeName; dra adds ResourceClaims and
// ResourceSlices when the API server serves resource.k8s.io/v1.
func NewWatcher(client kubernetes.Interface, nodeName string, dra bool) *Watcher {
	return &Watcher{client: client, nodeName: nodeName, wantDRA: dra, changed: make(chan struct{}, 1)}
}

// Changed receives a value (coalesced) after any watched object changes.
func (w *Watcher) Changed() <-chan struct{} { return w.changed }

// resync is long: the informers watch, and the periodic resync only guards
// against missed events.
const resync = 10 * time.Minute

// Start creates and runs the informers. It does not wait for them to sync:
// the processor works with whatever they have and degrades until then.
func (w *Watcher) Start(ctx context.Context) {
	ctx, w.cancel = context.WithCancel(ctx)
	onNode := func(field string) func(*metav1.ListOptions) {
		return func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector(field, w.nodeName).String()
		}
	}
	indexers := cache.Indexers{}
	w.mu.Lock()
	w.pods = coreinformers.NewFilteredPodInformer(w.client, metav1.NamespaceAll, resync, indexers, onNode("spec.nodeName"))
	w.nodes = coreinformers.NewFilteredNodeInformer(w.client, resync, indexers, onNode("metadata.name"))
	list := []*watched{{resource: "pods", informer: w.pods}, {resource: "nodes", informer: w.nodes}}
	if w.wantDRA && w.resourceV1Served() {
		w.draServed = true
		w.claims = resourceinformers.NewResourceClaimInformer(w.client, metav1.NamespaceAll, resync, indexers)
		w.slices = resourceinformers.NewFilteredResourceSliceInformer(w.client, resync, indexers, onNode("spec.nodeName"))
		list = append(list,
			&watched{resource: "resourceclaims", group: resourcev1.GroupName, informer: w.claims},
			&watched{resource: "resourceslices", group: resourcev1.GroupName, informer: w.slices})
	}
	w.informers = list
	w.mu.Unlock()

	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.notify() },
		UpdateFunc: func(any, any) { w.notify() },
		DeleteFunc: func(any) { w.notify() },
	}
	for _, wi := range list {
		wi := wi
		_ = wi.informer.SetTransform(stripManagedFields)
		_ = wi.informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			wi.record(err)
		})
		_, _ = wi.informer.AddEventHandler(notify)
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			wi.informer.RunWithContext(ctx)
		}()
	}
}

// resourceV1Served asks discovery whether resource.k8s.io/v1 exists. Any
// answer other than "not found" counts as served, so that a flaky discovery
// call does not switch DRA off for good; the informers report real errors.
func (w *Watcher) resourceV1Served() bool {
	_, err := w.client.Discovery().ServerResourcesForGroupVersion(resourcev1.SchemeGroupVersion.String())
	return !apierrors.IsNotFound(err)
}

func (w *Watcher) notify() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// Stop ends the informers.
func (w *Watcher) Stop() {
	if w.cancel != nil {
		w.cancel()
	}
	w.wg.Wait()
}

// Synced reports whether every watch has listed once.
func (w *Watcher) Synced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pods == nil || !w.pods.HasSynced() || !w.nodes.HasSynced() {
		return false
	}
	return !w.draServed || w.claims.HasSynced() && w.slices.HasSynced()
}

// Snapshot returns the objects the informers hold now.
func (w *Watcher) Snapshot() Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	var s Snapshot
	if w.pods == nil {
		return s
	}
	for _, o := range w.pods.GetStore().List() {
		// The fake clientset ignores field selectors; the real API server does not.
		if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName == w.nodeName {
			s.Pods = append(s.Pods, p)
		}
	}
	if o, ok, _ := w.nodes.GetStore().GetByKey(w.nodeName); ok {
		s.Node, _ = o.(*corev1.Node)
	}
	if w.draServed {
		s.DRA = true
		for _, o := range w.claims.GetStore().List() {
			if c, ok := o.(*resourcev1.ResourceClaim); ok {
				s.Claims = append(s.Claims, c)
			}
		}
		for _, o := range w.slices.GetStore().List() {
			if sl, ok := o.(*resourcev1.ResourceSlice); ok && (sl.Spec.NodeName == nil || *sl.Spec.NodeName == w.nodeName) {
				s.Slices = append(s.Slices, sl)
			}
		}
	}
	return s
}

// Problems lists the watches that fail now.
func (w *Watcher) Problems() []Problem {
	w.mu.Lock()
	list := w.informers
	w.mu.Unlock()
	var out []Problem
	for _, wi := range list {
		if p, ok := wi.problem(); ok {
			out = append(out, p)
		}
	}
	return out
}

func (wi *watched) record(err error) {
	if err == nil {
		return
	}
	wi.mu.Lock()
	defer wi.mu.Unlock()
	wi.err, wi.errRV, wi.errTime = err, wi.informer.LastSyncResourceVersion(), time.Now()
}

// problem reports the last error unless the informer has made progress since.
func (wi *watched) problem() (Problem, bool) {
	wi.mu.Lock()
	defer wi.mu.Unlock()
	if wi.err == nil {
		return Problem{}, false
	}
	synced := wi.informer.HasSynced()
	if synced && wi.informer.LastSyncResourceVersion() != wi.errRV {
		wi.err = nil
		return Problem{}, false
	}
	forbidden := apierrors.IsForbidden(wi.err) || apierrors.IsUnauthorized(wi.err)
	if synced && !forbidden {
		// A dropped watch on a synced informer is routine; it re-lists by itself.
		return Problem{}, false
	}
	return Problem{Resource: wi.resource, Err: wi.err, Hint: wi.hint()}, true
}

func (wi *watched) hint() string {
	group := wi.group
	if group == "" {
		group = `""`
	}
	switch {
	case apierrors.IsForbidden(wi.err):
		return fmt.Sprintf("the collector's service account may not list/watch %s: grant the verbs get, list, watch on %s (apiGroups: [%s]) in a ClusterRole bound to it", wi.resource, wi.resource, group)
	case apierrors.IsUnauthorized(wi.err):
		return "the Kubernetes API refused the collector's credentials: check auth_type and kubeconfig"
	default:
		var st apierrors.APIStatus
		if errors.As(wi.err, &st) {
			return fmt.Sprintf("the Kubernetes API answered %d for %s; retrying", st.Status().Code, wi.resource)
		}
		return fmt.Sprintf("the Kubernetes API is unreachable for %s: check auth_type, kubeconfig and network policy; retrying", wi.resource)
	}
}

// stripManagedFields keeps the informer caches small: server-side-apply
// bookkeeping is often larger than the rest of a pod.
func stripManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.ObjectMetaAccessor); ok {
		m.GetObjectMeta().SetManagedFields(nil)
	}
	return obj, nil
}
