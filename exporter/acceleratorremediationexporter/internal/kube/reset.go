package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// ResetGPU asks the agent on the device's node to reset the GPU: it sets
// the node annotation <prefix>/gpu-reset=<device uuid>@<plan id>. The
// agent (the accelerator_gpu_reset receiver) watches its own node, runs
// the reset command once nothing holds the GPU, and reports the outcome as
// a log record through the gateway, which the intake records in the plan.
// The agent stays read-only towards the cluster; only the remediator
// writes, as for every other step.
//
// Until the report comes the step is blocked (retried until
// eviction_timeout, then the plan stops and escalates); a reset the agent
// reports failed fails the step at once (no retry: the agent would not
// act on the same request again); either outcome removes the annotation.
type ResetGPU struct{ *Cluster }

// ResetKey is the node annotation that asks the node's agent for a reset.
func (c *Cluster) ResetKey() string { return accelschema.GPUResetAnnotation(c.Prefix) }

// ResetRequest is the annotation's value for a plan.
func ResetRequest(p *plan.Plan) string { return p.Subject.DeviceID + "@" + p.ID }

func (ResetGPU) Step() xid.Step { return xid.StepResetGPU }
func (ResetGPU) Applies(s plan.Subject) (bool, string) {
	if s.DeviceID == "" {
		return false, "the event names no device (hw.id) to reset"
	}
	return onNode(s)
}

// Idempotent: the agent acts once per request value, and a second reset
// of a GPU nothing holds changes nothing more.
func (ResetGPU) Idempotent() bool { return true }

func (r ResetGPU) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	node, dev, want := p.Subject.Node, p.Subject.DeviceID, ResetRequest(p)
	rep := p.Reset
	if rep != nil && rep.Device != dev {
		rep = nil
	}
	if rep != nil && rep.Outcome == accelschema.RemediationOutcomeSucceeded {
		if err := r.annotate(ctx, node, want, false, dry); err != nil {
			return executor.Outcome{}, err
		}
		return executor.Outcome{Detail: fmt.Sprintf("the agent on %s reset %s: %s", node, dev, rep.Detail)}, nil
	}
	if rep != nil && rep.Outcome == accelschema.RemediationOutcomeFailed {
		// The request is withdrawn too: left on the node it would block
		// every later plan's reset of the node's GPUs as "another plan's".
		// Only the withdrawal is worth a retry: the agent acts once per
		// request, so the step fails at once when it is done.
		failed := fmt.Errorf("the agent on %s could not reset %s: %s", node, dev, rep.Detail)
		if err := r.annotate(ctx, node, want, false, dry); err != nil {
			return executor.Outcome{}, fmt.Errorf("%w; withdrawing the request: %w", failed, err)
		}
		return executor.Outcome{}, &executor.Final{Err: failed}
	}
	if err := r.annotate(ctx, node, want, true, dry); err != nil {
		return executor.Outcome{}, err
	}
	if dry {
		return executor.Outcome{Skipped: true, Detail: fmt.Sprintf("dry run: %s=%s validated on node %s, not set", r.ResetKey(), want, node)}, nil
	}
	why := fmt.Errorf("asked the agent on %s to reset %s (%s=%s); no report yet", node, dev, r.ResetKey(), want)
	if rep != nil {
		why = fmt.Errorf("the agent on %s has not reset %s yet: %s", node, dev, rep.Detail)
	}
	return executor.Outcome{}, &executor.Blocked{Err: why}
}

// annotate sets (or, once done, removes) the request on the node, leaving
// another plan's request alone.
func (r ResetGPU) annotate(ctx context.Context, name, want string, set, dry bool) error {
	nodes := r.CS.CoreV1().Nodes()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur, ok := n.Annotations[r.ResetKey()]
		switch {
		case set && cur == want, !set && (!ok || cur != want):
			return nil
		case set && ok && cur != "":
			return &executor.Blocked{Err: fmt.Errorf("node %s already has %s=%s (another plan's reset)", name, r.ResetKey(), cur)}
		}
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		if set {
			n.Annotations[r.ResetKey()] = want
		} else {
			delete(n.Annotations, r.ResetKey())
		}
		_, err = nodes.Update(ctx, n, metav1.UpdateOptions{DryRun: dryRun(dry), FieldManager: r.Component})
		return err
	})
	if err != nil {
		return fmt.Errorf("node %s: %s: %w", name, r.ResetKey(), err)
	}
	return nil
}
