package k8sclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-accel/otelcol-accel/internal/backoff"
)

// Optional kinds: a cluster may not serve them (a custom resource whose
// CRD is not installed, an API group turned off). A component asks for
// them with WatchOptional, which looks the kind up in discovery first and
// starts its one shared watch only where the API serves it.
const (
	// HorizontalPodAutoscalers (autoscaling/v2) of the whole cluster: the
	// decisions behind a workload's replica changes.
	HorizontalPodAutoscalers Kind = "horizontalpodautoscalers"
	// LeaderWorkerSets (leaderworkerset.x-k8s.io/v1): multi-host inference
	// workloads, a group of pods per replica.
	LeaderWorkerSets Kind = "leaderworkersets"
	// NodeClaims (karpenter.sh/v1, cluster-scoped): capacity Karpenter
	// asked the cloud for, and whether it could launch it.
	NodeClaims Kind = "nodeclaims"
)

// OptionalKinds are the API group and version each optional kind is read
// at; LeaderWorkerSets and NodeClaims arrive as *unstructured.Unstructured
// (no Go types of theirs are compiled in), HorizontalPodAutoscalers as
// client-go's typed objects.
var OptionalKinds = map[Kind]schema.GroupVersionResource{
	HorizontalPodAutoscalers: {Group: "autoscaling", Version: "v2", Resource: string(HorizontalPodAutoscalers)},
	LeaderWorkerSets:         {Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: string(LeaderWorkerSets)},
	NodeClaims:               {Group: "karpenter.sh", Version: "v1", Resource: string(NodeClaims)},
}

// dynamicKinds are read through the dynamic client.
var dynamicKinds = map[Kind]bool{LeaderWorkerSets: true, NodeClaims: true}

// dynamicInformer is the informer of a custom resource of every namespace,
// as client-go's dynamicinformer makes it (whose package links client-go's
// informer factory of every API group).
func dynamicInformer(c dynamic.Interface, gvr schema.GroupVersionResource, resync time.Duration) cache.SharedIndexInformer {
	res := c.Resource(gvr).Namespace(metav1.NamespaceAll)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return res.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return res.Watch(ctx, o)
		},
	}
	return cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, c), &unstructured.Unstructured{},
		cache.SharedIndexInformerOptions{ResyncPeriod: resync, Indexers: cache.Indexers{}, ObjectDescription: gvr.String()})
}

// NewDynamicClient connects a dynamic client of its own as c says. A
// registry's informers use their client's instead (RESTClient.Dynamic),
// which shares its transport and rate limiter.
func NewDynamicClient(c APIConfig) (dynamic.Interface, error) {
	rc, err := NewClient(c)
	if err != nil {
		return nil, err
	}
	return rc.Dynamic()
}

// Served asks the API's discovery whether it serves kind: false with no
// error when the group, its version or the resource is not there (the CRD
// is not installed); an error when the API could not be asked.
func (i *Informers) Served(ctx context.Context, kind Kind) (bool, error) {
	gvr, ok := OptionalKinds[kind]
	if !ok {
		return true, nil
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	list, err := i.shared.client.ServerResourcesForGroupVersion(ctx, gvr.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovery of %s: %w", gvr.GroupVersion(), err)
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == gvr.Resource }), nil
}

// OptionalWatch reports what WatchOptional found.
type OptionalWatch struct {
	// Absent is called once when discovery says the API does not serve
	// the kind (the component logs it once); the lookup is repeated every
	// absentRecheck, so a CRD installed later is watched then.
	Absent func(gvr schema.GroupVersionResource)
	// Failed is called each time discovery could not be asked (rate-limit
	// the log); it is retried with a backoff.
	Failed func(err error)
	// Watching is called once the handler is registered.
	Watching func()
}

// absentRecheck is how often an absent optional kind is looked up again.
var absentRecheck = 10 * time.Minute

// WatchOptional registers h on kind once discovery says the API serves it,
// in the background until Release: it never fails a component's start,
// whether the API is away or the kind is not installed.
func (i *Informers) WatchOptional(kind Kind, h cache.ResourceEventHandler, report OptionalWatch) {
	i.mu.Lock()
	if i.released {
		i.mu.Unlock()
		return
	}
	if i.ctx == nil {
		i.ctx, i.cancel = context.WithCancel(context.Background())
	}
	ctx := i.ctx
	i.mu.Unlock()
	go func() {
		b := backoff.New(time.Second, time.Minute)
		toldAbsent := false
		for {
			served, err := i.Served(ctx, kind)
			wait := absentRecheck
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				if report.Failed != nil {
					report.Failed(err)
				}
				wait = b.Failed(time.Now())
			case served:
				if err := i.AddEventHandler(kind, h); err != nil {
					if report.Failed != nil && !errors.Is(err, errReleased) {
						report.Failed(err)
					}
					return
				}
				if report.Watching != nil {
					report.Watching()
				}
				return
			default:
				b.Succeeded()
				if !toldAbsent && report.Absent != nil {
					report.Absent(OptionalKinds[kind])
				}
				toldAbsent = true
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}()
}

// slimUnstructured drops, from a custom resource, what no component reads
// and what may hold secrets: managed fields, and the command, arguments
// and environment of the containers of a LeaderWorkerSet's templates.
func slimUnstructured(u *unstructured.Unstructured) {
	u.SetManagedFields(nil)
	for _, tmpl := range []string{"leaderTemplate", "workerTemplate"} {
		path := []string{"spec", "leaderWorkerTemplate", tmpl, "spec", "containers"}
		cs, ok, err := unstructured.NestedSlice(u.Object, path...)
		if !ok || err != nil {
			continue
		}
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				delete(m, "command")
				delete(m, "args")
				delete(m, "env")
				delete(m, "envFrom")
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, cs, path...)
	}
}
