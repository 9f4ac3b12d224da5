package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Cordon marks the node unschedulable and adds the <prefix>/unhealthy
// NoSchedule taint (value: the failure mode), so that nothing new lands on
// it and tolerations can tell why. Taints are a list without a merge key
// in a patch, so this reads, edits and updates the node, retrying on a
// conflict with a concurrent writer (the kubelet, an autoscaler).
type Cordon struct{ *Cluster }

func (Cordon) Step() xid.Step                        { return xid.StepCordonNode }
func (Cordon) Applies(s plan.Subject) (bool, string) { return onNode(s) }
func (Cordon) Idempotent() bool                      { return true }

func (c Cordon) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	nodes := c.CS.CoreV1().Nodes()
	conflicts := 0
	var already bool
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := nodes.Get(ctx, p.Subject.Node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		tainted := hasTaint(node, c.TaintKey())
		if node.Spec.Unschedulable && tainted {
			already = true
			return nil
		}
		node.Spec.Unschedulable = true
		if !tainted {
			node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{
				Key: c.TaintKey(), Value: p.FailureMode, Effect: corev1.TaintEffectNoSchedule, TimeAdded: new(metav1.Now()),
			})
		}
		_, err = nodes.Update(ctx, node, metav1.UpdateOptions{DryRun: dryRun(dry), FieldManager: c.Component})
		if err != nil {
			conflicts++
		}
		return err
	})
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("node %s: cordon: %w", p.Subject.Node, err)
	}
	if already {
		return executor.Outcome{Skipped: true, Detail: "node " + p.Subject.Node + " already cordoned and tainted"}, nil
	}
	detail := fmt.Sprintf("node %s cordoned, taint %s=%s:NoSchedule", p.Subject.Node, c.TaintKey(), p.FailureMode)
	if conflicts > 0 {
		detail += fmt.Sprintf(" (%d conflicting updates retried)", conflicts)
	}
	return executor.Outcome{Detail: detail}, nil
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
