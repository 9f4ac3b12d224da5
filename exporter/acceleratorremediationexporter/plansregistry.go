package acceleratorremediationexporter

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/remediationplans"
)

// consoleApprovals are approvals given through internal/remediationplans
// (the insights console's button). They reach the plan the way a node
// annotation does: the engine asks its Approvals on its next tick, so the
// approval is audited, checked against the expiry and followed by the same
// guard rails. A console approval is asked first, then the annotation.
type consoleApprovals struct {
	mu    sync.Mutex
	given map[string]plan.Approval
	next  engine.Approvals // the node annotation's reader; nil without Kubernetes
}

func newConsoleApprovals(next engine.Approvals) *consoleApprovals {
	return &consoleApprovals{given: map[string]plan.Approval{}, next: next}
}

func (c *consoleApprovals) Approval(ctx context.Context, p *plan.Plan) (*plan.Approval, error) {
	c.mu.Lock()
	a, ok := c.given[p.ID]
	delete(c.given, p.ID) // the engine records it in the plan
	c.mu.Unlock()
	if ok {
		return &a, nil
	}
	if c.next == nil {
		return nil, nil
	}
	return c.next.Approval(ctx, p)
}

func (c *consoleApprovals) give(id string, a plan.Approval) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.given[id] = a
}

// planSource is the exporter as internal/remediationplans shows it.
type planSource struct{ e *remediationExporter }

func (s planSource) Plans() []remediationplans.Plan {
	all := s.e.store.All()
	out := make([]remediationplans.Plan, 0, len(all))
	for _, p := range all {
		out = append(out, s.snapshot(p))
	}
	return out
}

// Approve checks what the engine would (the plan exists, waits for an
// approval and has not expired), hands the approval to the engine and
// wakes it.
func (s planSource) Approve(_ context.Context, planID, who string) error {
	if who == "" {
		return remediationplans.ErrNoApprover
	}
	p, ok := s.e.store.Get(planID)
	if !ok {
		return fmt.Errorf("%w: %s", remediationplans.ErrUnknownPlan, planID)
	}
	now := s.e.now()
	if p.State != plan.AwaitingApproval {
		return fmt.Errorf("%w: plan %s is %s", remediationplans.ErrNotAwaiting, planID, p.State)
	}
	if now.Sub(p.Created) > s.e.cfg.ApprovalTTL {
		return fmt.Errorf("%w: plan %s was not approved within %s", remediationplans.ErrNotAwaiting, planID, s.e.cfg.ApprovalTTL)
	}
	s.e.console.give(planID, plan.Approval{By: who, At: now, Via: remediationplans.Via})
	s.e.wake()
	return nil
}

func (s planSource) snapshot(p *plan.Plan) remediationplans.Plan {
	out := remediationplans.Plan{
		ID: p.ID, Action: p.Action, FailureMode: p.FailureMode, Scope: string(p.Scope),
		Subject: remediationplans.Subject{
			Node: p.Subject.Node, DeviceID: p.Subject.DeviceID, DeviceIndex: p.Subject.DeviceIndex,
			Model: p.Subject.Model, InstanceID: p.Subject.InstanceID,
		},
		Evidence: remediationplans.Evidence{
			Event: p.Evidence.Event, XID: p.Evidence.XID, Description: p.Evidence.Description,
			Observed: p.Evidence.Observed, Attributes: maps.Clone(p.Evidence.Attributes),
		},
		State: string(p.State), Reason: p.Reason, Created: p.Created, Updated: p.Updated, Finished: p.Finished,
	}
	for _, h := range p.Subject.Holders {
		out.Subject.Pods = append(out.Subject.Pods, remediationplans.Pod(h))
	}
	for _, st := range p.Steps {
		out.Steps = append(out.Steps, remediationplans.Step{
			Kind: string(st.Kind), Mode: string(s.e.engine.Mode(st.Kind)), State: string(st.State), Reason: st.Reason,
			Outcome: st.Outcome, Error: st.Error, Attempts: st.Attempts, Started: st.Started, Finished: st.Finished, DryRun: st.DryRun,
		})
	}
	if p.Approval != nil {
		a := remediationplans.Approval(*p.Approval)
		out.Approval = &a
	}
	if p.State == plan.AwaitingApproval {
		out.Expires = p.Created.Add(s.e.cfg.ApprovalTTL)
		if p.Subject.Node != "" {
			out.ApprovalHint = fmt.Sprintf("kubectl annotate node %s %s/approve=%s", p.Subject.Node, s.e.cfg.Prefix, p.ID)
		}
	}
	return out
}
