// Package k8sclienttest runs internal/k8sclient's informers on client-go's
// fake clientset, for tests that script the API's answers (reactors that
// refuse a list, discovery that serves no DRA). Only tests import it: it
// links client-go's clientset, which the collector's own client does not.
package k8sclienttest // import "github.com/otelcol-accel/otelcol-accel/internal/k8sclient/k8sclienttest"

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
)

// Providers are a registry's providers whose every API config reaches cs.
func Providers(cs kubernetes.Interface) k8sclient.Providers {
	return k8sclient.Providers{NewClient: func(k8sclient.APIConfig) (k8sclient.Client, error) { return Client(cs), nil }}
}

// Client adapts cs to k8sclient.Client: each kind's list and watch are the
// typed client's, so the clientset's reactors and tracker answer them.
func Client(cs kubernetes.Interface) k8sclient.Client { return clientset{cs} }

type clientset struct{ cs kubernetes.Interface }

type listWatch struct {
	list  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
}

func (c clientset) ListWatch(gvr schema.GroupVersionResource, tweak func(*metav1.ListOptions)) cache.ListerWatcher {
	lw := c.typed(gvr)
	if tweak == nil {
		tweak = func(*metav1.ListOptions) {}
	}
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			return lw.list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			return lw.watch(ctx, o)
		},
	}, c.cs)
}

func (c clientset) typed(gvr schema.GroupVersionResource) listWatch {
	all := metav1.NamespaceAll
	switch gvr.GroupResource().String() {
	case "pods":
		return listWatch{wrapList(c.cs.CoreV1().Pods(all).List), c.cs.CoreV1().Pods(all).Watch}
	case "nodes":
		return listWatch{wrapList(c.cs.CoreV1().Nodes().List), c.cs.CoreV1().Nodes().Watch}
	case "events":
		return listWatch{wrapList(c.cs.CoreV1().Events(all).List), c.cs.CoreV1().Events(all).Watch}
	case "resourceclaims.resource.k8s.io":
		return listWatch{wrapList(c.cs.ResourceV1().ResourceClaims(all).List), c.cs.ResourceV1().ResourceClaims(all).Watch}
	case "resourceslices.resource.k8s.io":
		return listWatch{wrapList(c.cs.ResourceV1().ResourceSlices().List), c.cs.ResourceV1().ResourceSlices().Watch}
	case "deployments.apps":
		return listWatch{wrapList(c.cs.AppsV1().Deployments(all).List), c.cs.AppsV1().Deployments(all).Watch}
	case "statefulsets.apps":
		return listWatch{wrapList(c.cs.AppsV1().StatefulSets(all).List), c.cs.AppsV1().StatefulSets(all).Watch}
	case "horizontalpodautoscalers.autoscaling":
		return listWatch{wrapList(c.cs.AutoscalingV2().HorizontalPodAutoscalers(all).List), c.cs.AutoscalingV2().HorizontalPodAutoscalers(all).Watch}
	}
	err := fmt.Errorf("k8sclienttest: no typed client for %s", gvr)
	return listWatch{
		func(context.Context, metav1.ListOptions) (runtime.Object, error) { return nil, err },
		func(context.Context, metav1.ListOptions) (watch.Interface, error) { return nil, err },
	}
}

func wrapList[L runtime.Object](list func(context.Context, metav1.ListOptions) (L, error)) func(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		l, err := list(ctx, o)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}

// ServerResourcesForGroupVersion ignores ctx: the fake clientset's discovery
// answers at once.
func (c clientset) ServerResourcesForGroupVersion(_ context.Context, groupVersion string) (*metav1.APIResourceList, error) {
	return c.cs.Discovery().ServerResourcesForGroupVersion(groupVersion)
}
