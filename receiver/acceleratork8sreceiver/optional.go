package acceleratork8sreceiver

import (
	"go.uber.org/zap"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver/internal/lifecycle"
)

// watchOptional asks for the kinds a cluster may not serve: HPAs, whose
// decisions time the scalings; LeaderWorkerSets, workloads like
// Deployments; Karpenter's NodeClaims, capacity it could not launch. Each
// is watched once discovery finds it (one watch per process, shared); an
// absent one is said once at info level and looked up again now and then.
func (r *k8sReceiver) watchOptional(inf *k8sclient.Informers) {
	report := func(kind k8sclient.Kind) k8sclient.OptionalWatch {
		return k8sclient.OptionalWatch{
			Absent: func(gvr schema.GroupVersionResource) {
				r.set.Logger.Info("accelerator_k8s: the Kubernetes API does not serve "+gvr.Resource+"."+gvr.Group+"/"+gvr.Version+
					" (its CRD is not installed): not watched; looked up again every 10 minutes", zap.String("kind", string(kind)))
			},
			Failed: func(err error) {
				r.rl.Warn("discovery/"+string(kind), "accelerator_k8s: cannot ask the Kubernetes API whether it serves "+string(kind)+"; retrying", zap.Error(err))
			},
			Watching: func() { r.rl.Reset("discovery/" + string(kind)) },
		}
	}
	inf.WatchOptional(k8sclient.HorizontalPodAutoscalers, cache.ResourceEventHandlerFuncs{
		AddFunc:    r.onAutoscaler,
		UpdateFunc: func(_, o any) { r.onAutoscaler(o) },
		DeleteFunc: r.onAutoscalerGone,
	}, report(k8sclient.HorizontalPodAutoscalers))
	inf.WatchOptional(k8sclient.LeaderWorkerSets, cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.onWorkload(o) },
		UpdateFunc: func(_, o any) { r.onWorkload(o) },
		DeleteFunc: r.onWorkloadGone,
	}, report(k8sclient.LeaderWorkerSets))
	inf.WatchOptional(k8sclient.NodeClaims, cache.ResourceEventHandlerFuncs{
		AddFunc:    r.onNodeClaim,
		UpdateFunc: func(_, o any) { r.onNodeClaim(o) },
		DeleteFunc: r.onNodeClaimGone,
	}, report(k8sclient.NodeClaims))
}

func (r *k8sReceiver) onAutoscaler(o any) {
	h, ok := o.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		return
	}
	a := lifecycle.AutoscalerOf(h)
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state.observeAutoscaler(a, now)
}

func (r *k8sReceiver) onAutoscalerGone(o any) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	if h, ok := o.(*autoscalingv2.HorizontalPodAutoscaler); ok {
		r.mu.Lock()
		r.state.forgetAutoscaler(h.Namespace, h.Name)
		r.mu.Unlock()
	}
}

func (r *k8sReceiver) onNodeClaim(o any) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	c, ok := r.match.NodeClaimOf(u)
	if !ok {
		return
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state.observeNodeClaim(c, now)
}

func (r *k8sReceiver) onNodeClaimGone(o any) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	if u, ok := o.(*unstructured.Unstructured); ok {
		r.mu.Lock()
		r.state.forgetNodeClaim(string(u.GetUID()))
		r.mu.Unlock()
	}
}
