package kubeapi

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

func objectFields(obj runtime.Object) fields.Set {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fields.Set{}
	}
	return fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}
}

// resourceTypes are the served resources with the field selectors the real
// API server supports for them.
var resourceTypes = []*resourceType{
	{group: "", version: "v1", plural: "pods", singular: "pod", kind: "Pod", namespaced: true,
		zero: func() runtime.Object { return &corev1.Pod{} },
		fieldsOf: func(o runtime.Object) fields.Set {
			p := o.(*corev1.Pod)
			f := objectFields(o)
			f["spec.nodeName"] = p.Spec.NodeName
			f["spec.restartPolicy"] = string(p.Spec.RestartPolicy)
			f["spec.schedulerName"] = p.Spec.SchedulerName
			f["spec.serviceAccountName"] = p.Spec.ServiceAccountName
			f["spec.hostNetwork"] = "false"
			f["status.phase"] = string(p.Status.Phase)
			f["status.podIP"] = p.Status.PodIP
			f["status.nominatedNodeName"] = p.Status.NominatedNodeName
			return f
		}},
	{group: "", version: "v1", plural: "nodes", singular: "node", kind: "Node",
		zero: func() runtime.Object { return &corev1.Node{} },
		fieldsOf: func(o runtime.Object) fields.Set {
			f := objectFields(o)
			f["spec.unschedulable"] = "false"
			return f
		}},
	{group: "", version: "v1", plural: "namespaces", singular: "namespace", kind: "Namespace",
		zero: func() runtime.Object { return &corev1.Namespace{} },
		fieldsOf: func(o runtime.Object) fields.Set {
			f := objectFields(o)
			f["status.phase"] = string(o.(*corev1.Namespace).Status.Phase)
			return f
		}},
	{group: "apps", version: "v1", plural: "deployments", singular: "deployment", kind: "Deployment", namespaced: true,
		zero: func() runtime.Object { return &appsv1.Deployment{} }, fieldsOf: objectFields},
	{group: "apps", version: "v1", plural: "replicasets", singular: "replicaset", kind: "ReplicaSet", namespaced: true,
		zero: func() runtime.Object { return &appsv1.ReplicaSet{} }, fieldsOf: objectFields},
	{group: "apps", version: "v1", plural: "statefulsets", singular: "statefulset", kind: "StatefulSet", namespaced: true,
		zero: func() runtime.Object { return &appsv1.StatefulSet{} }, fieldsOf: objectFields},
	{group: "batch", version: "v1", plural: "jobs", singular: "job", kind: "Job", namespaced: true,
		zero: func() runtime.Object { return &batchv1.Job{} }, fieldsOf: objectFields},
	{group: "batch", version: "v1", plural: "cronjobs", singular: "cronjob", kind: "CronJob", namespaced: true,
		zero: func() runtime.Object { return &batchv1.CronJob{} }, fieldsOf: objectFields},
	{group: "resource.k8s.io", version: "v1", plural: "resourceclaims", singular: "resourceclaim", kind: "ResourceClaim", namespaced: true,
		zero: func() runtime.Object { return &resourcev1.ResourceClaim{} }, fieldsOf: objectFields},
	{group: "resource.k8s.io", version: "v1", plural: "resourceslices", singular: "resourceslice", kind: "ResourceSlice",
		zero: func() runtime.Object { return &resourcev1.ResourceSlice{} },
		fieldsOf: func(o runtime.Object) fields.Set {
			s := o.(*resourcev1.ResourceSlice)
			f := objectFields(o)
			f["spec.driver"] = s.Spec.Driver
			f["spec.pool.name"] = s.Spec.Pool.Name
			f["spec.nodeName"] = ""
			if s.Spec.NodeName != nil {
				f["spec.nodeName"] = *s.Spec.NodeName
			}
			return f
		}},
	{group: "resource.k8s.io", version: "v1", plural: "deviceclasses", singular: "deviceclass", kind: "DeviceClass",
		zero: func() runtime.Object { return &resourcev1.DeviceClass{} }, fieldsOf: objectFields},
	// The workloads' autoscalers and the custom resources of issue 19's
	// story: LeaderWorkerSets (multi-host inference) and Karpenter's
	// NodeClaims (capacity it could not launch).
	{group: "autoscaling", version: "v2", plural: "horizontalpodautoscalers", singular: "horizontalpodautoscaler", kind: "HorizontalPodAutoscaler", namespaced: true,
		zero: func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} }, fieldsOf: objectFields},
	{group: "leaderworkerset.x-k8s.io", version: "v1", plural: "leaderworkersets", singular: "leaderworkerset", kind: "LeaderWorkerSet", namespaced: true,
		unstructured: true, zero: func() runtime.Object { return &unstructured.Unstructured{} }, fieldsOf: objectFields},
	{group: "karpenter.sh", version: "v1", plural: "nodeclaims", singular: "nodeclaim", kind: "NodeClaim",
		unstructured: true, zero: func() runtime.Object { return &unstructured.Unstructured{} }, fieldsOf: objectFields},
}
