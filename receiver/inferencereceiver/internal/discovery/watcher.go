package discovery

import (
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Watcher keeps the pods of this node in an informer cache and resolves the
// inference servers among them on demand.
type Watcher struct {
	rules    Rules
	factory  informers.SharedInformerFactory
	informer cache.SharedIndexInformer
	stop     chan struct{}
	stopOnce sync.Once
}

// NewWatcher watches the pods of rules.NodeName (all pods when it is empty,
// which only tests do) through client.
func NewWatcher(client kubernetes.Interface, rules Rules) *Watcher {
	opts := []informers.SharedInformerOption{informers.WithTransform(slimPod)}
	if rules.NodeName != "" {
		selector := fields.OneTermEqualSelector("spec.nodeName", rules.NodeName).String()
		opts = append(opts, informers.WithTweakListOptions(func(o *v1.ListOptions) { o.FieldSelector = selector }))
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, opts...)
	return &Watcher{
		rules:    rules,
		factory:  factory,
		informer: factory.Core().V1().Pods().Informer(),
		stop:     make(chan struct{}),
	}
}

// Start begins listing and watching; it does not wait for the first list.
func (w *Watcher) Start() { w.factory.Start(w.stop) }

// Synced reports whether the first list has completed.
func (w *Watcher) Synced() bool { return w.informer.HasSynced() }

// Stop ends the watch and waits for the informer to exit.
func (w *Watcher) Stop() {
	w.stopOnce.Do(func() {
		close(w.stop)
		w.factory.Shutdown()
	})
}

// Targets returns the inference servers among the cached pods, sorted by
// ID, and the selected pods that could not become targets.
func (w *Watcher) Targets() ([]Target, []error) {
	var targets []Target
	var errs []error
	for _, obj := range w.informer.GetStore().List() {
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

// slimPod keeps what target resolution reads, so the cache of a busy node
// stays small.
func slimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Pod{
		ObjectMeta: v1.ObjectMeta{
			Name:              pod.Name,
			Namespace:         pod.Namespace,
			UID:               pod.UID,
			ResourceVersion:   pod.ResourceVersion,
			Labels:            pod.Labels,
			Annotations:       pod.Annotations,
			DeletionTimestamp: pod.DeletionTimestamp,
		},
		Spec: corev1.PodSpec{NodeName: pod.Spec.NodeName},
		Status: corev1.PodStatus{
			Phase: pod.Status.Phase,
			PodIP: pod.Status.PodIP,
		},
	}
	for _, c := range pod.Spec.Containers {
		slim.Spec.Containers = append(slim.Spec.Containers, corev1.Container{Name: c.Name, Ports: c.Ports})
	}
	return slim, nil
}
