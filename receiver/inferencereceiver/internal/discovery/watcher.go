package discovery

import (
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
)

// Watcher reads the pods of this node from the agent's shared pod informer
// (internal/k8sclient) and resolves the inference servers among them on
// demand.
type Watcher struct {
	rules     Rules
	informers *k8sclient.Informers

	mu   sync.Mutex
	pods cache.SharedIndexInformer
}

// NewWatcher holds the informers of rules.NodeName (every node's pods when
// it is empty, which only tests do) in registry (k8sclient.Shared() in the
// collector), reached as api says. It fails only when the client cannot be
// built.
func NewWatcher(registry *k8sclient.Registry, api k8sclient.APIConfig, rules Rules) (*Watcher, error) {
	informers, err := registry.Acquire(api, rules.NodeName)
	if err != nil {
		return nil, err
	}
	return &Watcher{rules: rules, informers: informers}, nil
}

// Start asks for the pod informer (starting it unless another component
// runs it already); it does not wait for the first list.
func (w *Watcher) Start() error {
	pods, err := w.informers.Informer(k8sclient.Pods)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.pods = pods
	w.mu.Unlock()
	return nil
}

// Synced reports whether the first list has completed.
func (w *Watcher) Synced() bool {
	w.mu.Lock()
	started := w.pods != nil
	w.mu.Unlock()
	return started && w.informers.Synced()
}

// Problems lists the failing watches, each with what to do about it.
func (w *Watcher) Problems() []k8sclient.Problem { return w.informers.Problems() }

// Stop lets go of the informers (the last component to let go stops them).
func (w *Watcher) Stop() { w.informers.Release() }

// Targets returns the inference servers among the cached pods, sorted by
// ID, and the selected pods that could not become targets.
func (w *Watcher) Targets() ([]Target, []error) {
	w.mu.Lock()
	pods := w.pods
	w.mu.Unlock()
	if pods == nil {
		return nil, nil
	}
	var targets []Target
	var errs []error
	for _, obj := range pods.GetStore().List() {
		pod, ok := obj.(*corev1.Pod)
		if !ok || !w.rules.Selected(pod) {
			continue
		}
		t, ok, err := w.rules.Target(pod)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			targets = append(targets, t)
		}
	}
	slices.SortFunc(targets, func(a, b Target) int { return strings.Compare(a.ID, b.ID) })
	return targets, errs
}
