package lifecycle

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// KindLeaderWorkerSet is the kind of leaderworkerset.x-k8s.io/v1
// LeaderWorkerSets: one replica is a group of pods (a leader and
// size-1 workers) serving one model across hosts.
const KindLeaderWorkerSet = "LeaderWorkerSet"

// leaderWorkerSet reads what scaling needs from the unstructured object
// (no Go types of the API are compiled in): spec.replicas (groups, 1 when
// unset as the API defaults it), status.readyReplicas and status.replicas
// (groups), and the pod templates' containers, leader's and workers'
// together, so a group that asks for accelerators in either is followed.
func leaderWorkerSet(u *unstructured.Unstructured) (Workload, bool) {
	w := Workload{Kind: KindLeaderWorkerSet, Namespace: u.GetNamespace(), Name: u.GetName(), Desired: 1}
	if r, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); ok {
		w.Desired = int32(r)
	}
	if r, ok, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas"); ok {
		w.Ready = int32(r)
	}
	if r, ok, _ := unstructured.NestedInt64(u.Object, "status", "replicas"); ok {
		w.Current = int32(r)
	}
	spec := &corev1.PodSpec{}
	for _, tmpl := range []string{"leaderTemplate", "workerTemplate"} {
		m, ok, _ := unstructured.NestedMap(u.Object, "spec", "leaderWorkerTemplate", tmpl)
		if !ok {
			continue
		}
		var pt corev1.PodTemplateSpec
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &pt); err != nil {
			continue // a template this package cannot read asks for nothing
		}
		spec.Containers = append(spec.Containers, pt.Spec.Containers...)
		spec.InitContainers = append(spec.InitContainers, pt.Spec.InitContainers...)
		spec.ResourceClaims = append(spec.ResourceClaims, pt.Spec.ResourceClaims...)
		if tmpl == "workerTemplate" || w.Labels == nil {
			w.Labels = pt.Labels
		}
	}
	w.Template = spec
	return w, true
}
