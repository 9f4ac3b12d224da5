package kube

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// RestartWorkload restarts the holder's pod for an application fault: the
// device is fine, so the node is not fenced; the pod is evicted (PDBs
// respected) and its controller starts a fresh one. A pod no controller
// owns would not come back, so it is left alone and the step says so.
type RestartWorkload struct{ *Cluster }

func (RestartWorkload) Step() xid.Step                        { return xid.StepRestartWorkload }
func (RestartWorkload) Applies(s plan.Subject) (bool, string) { return onNode(s) }
func (RestartWorkload) Idempotent() bool                      { return true }

func (r RestartWorkload) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	if len(p.Subject.Holders) == 0 {
		return executor.Outcome{Skipped: true, Detail: "the event names no pod holding the device: nothing to restart"}, nil
	}
	var managed []plan.Pod
	var unmanaged []string
	for _, h := range p.Subject.Holders {
		pod, err := r.CS.CoreV1().Pods(h.Namespace).Get(ctx, h.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return executor.Outcome{}, fmt.Errorf("pod %s/%s: %w", h.Namespace, h.Name, err)
		}
		if metav1.GetControllerOf(pod) == nil {
			unmanaged = append(unmanaged, h.Namespace+"/"+h.Name)
			continue
		}
		managed = append(managed, h)
	}
	res, err := evictor(r).evict(ctx, p.Subject.Node, managed, dry)
	detail := "restart: " + res.String()
	if len(unmanaged) > 0 {
		detail += "; not restarted (no controller would start it again): " + strings.Join(unmanaged, ", ")
	}
	return executor.Outcome{Detail: detail}, err
}
