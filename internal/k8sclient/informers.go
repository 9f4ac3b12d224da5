package k8sclient

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	resourceinformers "k8s.io/client-go/informers/resource/v1"
	"k8s.io/client-go/kubernetes"
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

// InformerProvider makes the informer of one kind for nodeName (every
// node's objects when nodeName is empty, which only tests want). The
// registry sets its transform and watch-error handler and runs it.
type InformerProvider func(client kubernetes.Interface, nodeName string, resync time.Duration) cache.SharedIndexInformer

// DefaultInformers are client-go's typed informers, each limited to the
// node where the API allows it.
func DefaultInformers() map[Kind]InformerProvider {
	return map[Kind]InformerProvider{
		Pods: func(c kubernetes.Interface, node string, resync time.Duration) cache.SharedIndexInformer {
			return coreinformers.NewFilteredPodInformer(c, metav1.NamespaceAll, resync, cache.Indexers{}, onNode("spec.nodeName", node))
		},
		Nodes: func(c kubernetes.Interface, node string, resync time.Duration) cache.SharedIndexInformer {
			return coreinformers.NewFilteredNodeInformer(c, resync, cache.Indexers{}, onNode("metadata.name", node))
		},
		ResourceClaims: func(c kubernetes.Interface, _ string, resync time.Duration) cache.SharedIndexInformer {
			return resourceinformers.NewResourceClaimInformer(c, metav1.NamespaceAll, resync, cache.Indexers{})
		},
		ResourceSlices: func(c kubernetes.Interface, node string, resync time.Duration) cache.SharedIndexInformer {
			return resourceinformers.NewFilteredResourceSliceInformer(c, resync, cache.Indexers{}, onNode("spec.nodeName", node))
		},
		Deployments: func(c kubernetes.Interface, _ string, resync time.Duration) cache.SharedIndexInformer {
			return appsinformers.NewDeploymentInformer(c, metav1.NamespaceAll, resync, cache.Indexers{})
		},
		StatefulSets: func(c kubernetes.Interface, _ string, resync time.Duration) cache.SharedIndexInformer {
			return appsinformers.NewStatefulSetInformer(c, metav1.NamespaceAll, resync, cache.Indexers{})
		},
		HorizontalPodAutoscalers: hpaInformer,
		Events: func(c kubernetes.Interface, _ string, resync time.Duration) cache.SharedIndexInformer {
			return coreinformers.NewFilteredEventInformer(c, metav1.NamespaceAll, resync, cache.Indexers{}, func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("involvedObject.kind", "Pod").String()
			})
		},
	}
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
