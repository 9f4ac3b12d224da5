package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Drain evicts every pod on the node that a drain would (as kubectl drain
// does): not DaemonSet pods (their controller puts them back and ignores
// unschedulable), not mirror pods (the kubelet owns them), not pods that
// already finished.
type Drain struct{ *Cluster }

func (Drain) Step() xid.Step                        { return xid.StepDrainNode }
func (Drain) Applies(s plan.Subject) (bool, string) { return onNode(s) }
func (Drain) Idempotent() bool                      { return true }

func (d Drain) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	list, err := d.CS.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", p.Subject.Node).String(),
	})
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("node %s: list pods: %w", p.Subject.Node, err)
	}
	var pods []corev1.Pod
	for _, pod := range list.Items {
		if drainable(&pod) {
			pods = append(pods, pod)
		}
	}
	r, err := evictor(d).evict(ctx, p.Subject.Node, podsOf(pods), dry)
	return executor.Outcome{Detail: "drain: " + r.String()}, err
}

func drainable(p *corev1.Pod) bool {
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Controller != nil && *o.Controller {
			return false
		}
	}
	return true
}
