package lifecycle

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Workload is what scaling needs to know of a Deployment, StatefulSet or
// LeaderWorkerSet.
type Workload struct {
	Kind, Namespace, Name string
	// Desired is spec.replicas (1 when unset, as the API defaults it).
	Desired int32
	// Ready is status.readyReplicas; Current is status.replicas.
	Ready, Current int32
	// Template is the pod template's spec, to tell accelerator workloads.
	Template *corev1.PodSpec
	Labels   map[string]string
}

// WorkloadOf reads a Deployment, a StatefulSet or a LeaderWorkerSet
// (unstructured); ok is false for others.
func WorkloadOf(o runtime.Object) (Workload, bool) {
	desired := func(r *int32) int32 {
		if r == nil {
			return 1
		}
		return *r
	}
	switch w := o.(type) {
	case *appsv1.Deployment:
		return Workload{Kind: "Deployment", Namespace: w.Namespace, Name: w.Name, Desired: desired(w.Spec.Replicas),
			Ready: w.Status.ReadyReplicas, Current: w.Status.Replicas, Template: &w.Spec.Template.Spec, Labels: w.Spec.Template.Labels}, true
	case *appsv1.StatefulSet:
		return Workload{Kind: "StatefulSet", Namespace: w.Namespace, Name: w.Name, Desired: desired(w.Spec.Replicas),
			Ready: w.Status.ReadyReplicas, Current: w.Status.Replicas, Template: &w.Spec.Template.Spec, Labels: w.Spec.Template.Labels}, true
	case *unstructured.Unstructured:
		if w.GetKind() == KindLeaderWorkerSet {
			return leaderWorkerSet(w)
		}
	}
	return Workload{}, false
}

// RequestedByTemplate lists the accelerator resources the workload's pods
// ask for.
func (m Matcher) RequestedByTemplate(w Workload) []string {
	if w.Template == nil {
		return nil
	}
	return m.Requested(&corev1.Pod{Spec: *w.Template})
}

// Settled reports whether a scaling to Desired is done: scale-up when that
// many replicas are ready, scale-down when no more than that many exist.
func (w Workload) Settled(from int32) bool {
	if w.Desired >= from {
		return w.Ready >= w.Desired
	}
	return w.Current <= w.Desired
}
