package k8sclient

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Kind is one kind of watched object, named by its resource plural as RBAC
// rules and the API server name it.
type Kind string

// The kinds the agent watches.
const (
	// Pods of the node (spec.nodeName).
	Pods Kind = "pods"
	// Nodes is the node itself (metadata.name).
	Nodes Kind = "nodes"
	// ResourceClaims of the whole cluster: the API cannot select them by
	// node, so consumers keep those a pod of their node holds.
	ResourceClaims Kind = "resourceclaims"
	// ResourceSlices published for the node (spec.nodeName).
	ResourceSlices Kind = "resourceslices"
	// Events about pods (involvedObject.kind=Pod), of the whole cluster:
	// the API cannot select events by node. The accelerator_k8s receiver
	// reads the scheduler's FailedScheduling and the kubelet's Pulled.
	Events Kind = "events"
	// Deployments and StatefulSets of the whole cluster: the workloads
	// behind endpoints, whose replica changes are scaling events.
	Deployments  Kind = "deployments"
	StatefulSets Kind = "statefulsets"
)

// apiGroup is the kind's API group as a ClusterRole names it.
func (k Kind) apiGroup() string {
	switch k {
	case ResourceClaims, ResourceSlices:
		return resourcev1.GroupName
	case Deployments, StatefulSets:
		return appsv1.GroupName
	}
	if gvr, ok := OptionalKinds[k]; ok {
		return gvr.Group
	}
	return ""
}

// GroupVersionResource is the API resource kind is read at (empty when
// the collector does not know the kind).
func (k Kind) GroupVersionResource() schema.GroupVersionResource {
	if t, ok := typedKinds[k]; ok {
		return t.gvr
	}
	return OptionalKinds[k]
}

// InformerProvider makes the informer of one kind for nodeName (every
// node's objects when nodeName is empty, which only tests want). The
// registry sets its transform and watch-error handler and runs it.
type InformerProvider func(client Client, nodeName string, resync time.Duration) cache.SharedIndexInformer

// typedKinds are the API resource and Go type of each kind read as
// client-go's typed objects, with the field that limits it to a node
// (empty: the API cannot select the kind by node).
var typedKinds = map[Kind]struct {
	gvr    schema.GroupVersionResource
	object runtime.Object
	node   string
}{
	Pods:                     {corev1.SchemeGroupVersion.WithResource("pods"), &corev1.Pod{}, "spec.nodeName"},
	Nodes:                    {corev1.SchemeGroupVersion.WithResource("nodes"), &corev1.Node{}, "metadata.name"},
	Events:                   {corev1.SchemeGroupVersion.WithResource("events"), &corev1.Event{}, ""},
	ResourceClaims:           {resourcev1.SchemeGroupVersion.WithResource("resourceclaims"), &resourcev1.ResourceClaim{}, ""},
	ResourceSlices:           {resourcev1.SchemeGroupVersion.WithResource("resourceslices"), &resourcev1.ResourceSlice{}, "spec.nodeName"},
	Deployments:              {appsv1.SchemeGroupVersion.WithResource("deployments"), &appsv1.Deployment{}, ""},
	StatefulSets:             {appsv1.SchemeGroupVersion.WithResource("statefulsets"), &appsv1.StatefulSet{}, ""},
	HorizontalPodAutoscalers: {OptionalKinds[HorizontalPodAutoscalers], &autoscalingv2.HorizontalPodAutoscaler{}, ""},
}

// DefaultInformers are the informers of the typed kinds over the client's
// list and watch, each limited to the node where the API allows it: what
// client-go's typed informers do, without its informer factory (which
// links every API group's informers into the binary).
func DefaultInformers() map[Kind]InformerProvider {
	out := map[Kind]InformerProvider{}
	for kind, t := range typedKinds {
		out[kind] = func(c Client, node string, resync time.Duration) cache.SharedIndexInformer {
			var tweak func(*metav1.ListOptions)
			switch {
			case t.node != "":
				tweak = onNode(t.node, node)
			case kind == Events:
				// The accelerator_k8s receiver reads pods' events only.
				tweak = func(o *metav1.ListOptions) {
					o.FieldSelector = fields.OneTermEqualSelector("involvedObject.kind", "Pod").String()
				}
			}
			return cache.NewSharedIndexInformerWithOptions(c.ListWatch(t.gvr, tweak), t.object,
				cache.SharedIndexInformerOptions{ResyncPeriod: resync, Indexers: cache.Indexers{}})
		}
	}
	return out
}

func onNode(field, node string) func(*metav1.ListOptions) {
	return func(o *metav1.ListOptions) {
		if node != "" {
			o.FieldSelector = fields.OneTermEqualSelector(field, node).String()
		}
	}
}

// slim drops from every cached object what no component reads and what
// costs the most memory: server-side-apply bookkeeping, and the command,
// arguments and environment of a pod's containers (which also hold
// secrets that the collector has no business keeping).
func slim(obj any) (any, error) {
	if m, ok := obj.(metav1.ObjectMetaAccessor); ok {
		m.GetObjectMeta().SetManagedFields(nil)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		slimUnstructured(u)
	}
	switch w := obj.(type) {
	case *appsv1.Deployment:
		slimPodSpec(&w.Spec.Template.Spec)
	case *appsv1.StatefulSet:
		slimPodSpec(&w.Spec.Template.Spec)
	}
	if p, ok := obj.(*corev1.Pod); ok {
		for i := range p.Spec.Containers {
			slimContainer(&p.Spec.Containers[i])
		}
		for i := range p.Spec.InitContainers {
			slimContainer(&p.Spec.InitContainers[i])
		}
		for i := range p.Spec.EphemeralContainers {
			c := &p.Spec.EphemeralContainers[i].EphemeralContainerCommon
			c.Command, c.Args, c.Env, c.EnvFrom = nil, nil, nil, nil
		}
	}
	return obj, nil
}

// slimPodSpec slims a workload's pod template as a pod's containers are.
func slimPodSpec(s *corev1.PodSpec) {
	for i := range s.Containers {
		slimContainer(&s.Containers[i])
	}
	for i := range s.InitContainers {
		slimContainer(&s.InitContainers[i])
	}
}

func slimContainer(c *corev1.Container) {
	c.Command, c.Args, c.Env, c.EnvFrom = nil, nil, nil, nil
}
