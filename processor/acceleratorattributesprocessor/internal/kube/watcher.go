// Package kube reads what PodResources does not say from the Kubernetes
// API: pod labels, annotations, owners and UIDs, this node's labels, and
// DRA ResourceClaims and ResourceSlices. The informers are the agent's
// shared ones (internal/k8sclient): limited to this node where the API
// allows it (pods, the node, slices); ResourceClaims cannot be selected by
// node, so they are watched cluster-wide and kept only when a pod of this
// node holds them.
package kube

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
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

// Watcher reads the shared informers of its node.
type Watcher struct {
	informers *k8sclient.Informers
	nodeName  string
	wantDRA   bool
	changed   chan struct{}

	mu        sync.Mutex
	draServed bool
	pods      cache.SharedIndexInformer
	nodes     cache.SharedIndexInformer
	claims    cache.SharedIndexInformer
	slices    cache.SharedIndexInformer
}

// NewWatcher holds the informers of nodeName in registry (k8sclient.Shared()
// in the collector), reached as api says; dra adds ResourceClaims and
// ResourceSlices when the API server serves resource.k8s.io/v1. It fails
// only when the client cannot be built.
func NewWatcher(registry *k8sclient.Registry, api k8sclient.APIConfig, nodeName string, dra bool) (*Watcher, error) {
	informers, err := registry.Acquire(api, nodeName)
	if err != nil {
		return nil, err
	}
	return &Watcher{informers: informers, nodeName: nodeName, wantDRA: dra, changed: make(chan struct{}, 1)}, nil
}

// Changed receives a value (coalesced) after any watched object changes.
func (w *Watcher) Changed() <-chan struct{} { return w.changed }

// Start asks for the informers (starting those no other component runs)
// and follows their changes. It does not wait for them to sync: the
// processor works with whatever they have and degrades until then.
func (w *Watcher) Start(ctx context.Context) error {
	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.notify() },
		UpdateFunc: func(any, any) { w.notify() },
		DeleteFunc: func(any) { w.notify() },
	}
	watch := func(kind k8sclient.Kind) (cache.SharedIndexInformer, error) {
		inf, err := w.informers.Informer(kind)
		if err != nil {
			return nil, err
		}
		if err := w.informers.AddEventHandler(kind, notify); err != nil {
			return nil, err
		}
		return inf, nil
	}
	pods, err := watch(k8sclient.Pods)
	if err != nil {
		return err
	}
	nodes, err := watch(k8sclient.Nodes)
	if err != nil {
		return err
	}
	var claims, slices cache.SharedIndexInformer
	dra := w.wantDRA && w.resourceV1Served(ctx)
	if dra {
		if claims, err = watch(k8sclient.ResourceClaims); err != nil {
			return err
		}
		if slices, err = watch(k8sclient.ResourceSlices); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pods, w.nodes, w.claims, w.slices, w.draServed = pods, nodes, claims, slices, dra
	return nil
}

// resourceV1Served asks discovery whether resource.k8s.io/v1 exists. Any
// answer other than "not found" counts as served, so that a flaky discovery
// call does not switch DRA off for good; the informers report real errors.
func (w *Watcher) resourceV1Served(ctx context.Context) bool {
	_, err := w.informers.Client().ServerResourcesForGroupVersion(ctx, resourcev1.SchemeGroupVersion.String())
	return !apierrors.IsNotFound(err)
}

func (w *Watcher) notify() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// Stop lets go of the informers (the last component to let go stops them).
func (w *Watcher) Stop() { w.informers.Release() }

// Synced reports whether every watch has listed once.
func (w *Watcher) Synced() bool {
	w.mu.Lock()
	started := w.pods != nil
	w.mu.Unlock()
	return started && w.informers.Synced()
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

// Problems lists the watches that fail now, each with what to do about it.
func (w *Watcher) Problems() []k8sclient.Problem { return w.informers.Problems() }
