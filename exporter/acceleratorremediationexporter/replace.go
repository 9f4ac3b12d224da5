package acceleratorremediationexporter

import (
	"context"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/kube"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// replaceInstance carries out mark_instance_unhealthy the way the node's
// provisioner replaces it: a Karpenter node by deleting its NodeClaim,
// any other instance through its Auto Scaling group (when the AWS executors
// are on). Either may be missing.
type replaceInstance struct {
	karpenter executor.Executor
	asg       executor.Executor
}

func (replaceInstance) Step() xid.Step { return xid.StepMarkUnhealthy }

func (r replaceInstance) Applies(s plan.Subject) (bool, string) {
	var why string
	for _, e := range []executor.Executor{r.karpenter, r.asg} {
		if e == nil {
			continue
		}
		ok, w := e.Applies(s)
		if ok {
			return true, ""
		}
		why = w
	}
	return false, why
}

func (replaceInstance) Idempotent() bool { return true }

func (r replaceInstance) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	var out executor.Outcome
	if r.karpenter != nil {
		if ok, _ := r.karpenter.Applies(p.Subject); ok {
			var err error
			out, err = r.karpenter.Run(ctx, p, dry)
			if err != nil || !out.Skipped || out.Detail != kube.NotKarpenter {
				return out, err
			}
		}
	}
	if r.asg != nil {
		if ok, _ := r.asg.Applies(p.Subject); ok {
			return r.asg.Run(ctx, p, dry)
		}
	}
	return out, nil
}
