// Package engine advances remediation plans: for each open plan, oldest
// first, it runs the next step when the step's mode, the approval and the
// guard rails allow, persisting the plan before and after every call so that
// a restart resumes where it stopped and never runs a step twice. A step
// that fails is retried with backoff; when its retries are spent the plan
// stops and is escalated, and the escalation itself is retried until it is
// delivered.
package engine // import "github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/guard"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/backoff"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Mode is how a step is carried out.
type Mode string

const (
	// Recommend: the plan is logged and shown; nothing runs.
	Recommend Mode = "recommend"
	// Approve: the plan waits for an approval before this step.
	Approve Mode = "approve"
	// Automatic: the step runs within the guard rails.
	Automatic Mode = "automatic"
)

// Approvals finds an approval for a plan (a node annotation, a click in the
// console). It returns nil when there is none yet.
type Approvals interface {
	Approval(ctx context.Context, p *plan.Plan) (*plan.Approval, error)
}

// Audit records every change of a plan and every step's outcome.
type Audit interface {
	PlanChanged(p *plan.Plan)
	StepFinished(p *plan.Plan, step int, err error)
	Escalated(p *plan.Plan, err error)
}

// Config is how the engine acts.
type Config struct {
	Modes       map[xid.Step]Mode
	DefaultMode Mode
	// ApprovalTTL is how long a plan waits for its approval.
	ApprovalTTL time.Duration
	DryRun      bool
	Guard       guard.Config
	// RetryInitial and RetryMax space out a failing step's attempts;
	// MaxAttempts bounds them.
	RetryInitial time.Duration
	RetryMax     time.Duration
	MaxAttempts  int
	// BlockedTimeout bounds how long a step may stay blocked (a PDB that
	// allows no eviction) before the plan stops.
	BlockedTimeout time.Duration
}

// Engine advances plans.
type Engine struct {
	cfg       Config
	store     *plan.Store
	executors executor.Set
	approvals Approvals
	fleet     guard.Fleet
	audit     Audit
}

// New returns an engine.
func New(cfg Config, store *plan.Store, ex executor.Set, approvals Approvals, fleet guard.Fleet, audit Audit) *Engine {
	return &Engine{cfg: cfg, store: store, executors: ex, approvals: approvals, fleet: fleet, audit: audit}
}

// Mode is the mode a step of this kind runs in: its own from modes, else
// the default.
func (e *Engine) Mode(s xid.Step) Mode {
	if m, ok := e.cfg.Modes[s]; ok {
		return m
	}
	return e.cfg.DefaultMode
}

// Tick advances every open plan once, and retries escalations not yet
// delivered. Errors saving plans are returned; a step's own errors are
// part of its plan.
func (e *Engine) Tick(ctx context.Context, now time.Time) error {
	var errs []error
	for _, p := range e.store.All() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case !p.State.Terminal():
			errs = append(errs, e.advance(ctx, p, now))
		case p.State == plan.Failed && !p.Escalated:
			errs = append(errs, e.escalate(ctx, p, now))
		}
	}
	errs = append(errs, e.store.Prune(ctx, now))
	return errors.Join(errs...)
}

func (e *Engine) save(ctx context.Context, p *plan.Plan, now time.Time, changed bool) error {
	p.Updated = now
	if err := e.store.Save(ctx, p); err != nil {
		return fmt.Errorf("plan %s not saved: %w", p.ID, err)
	}
	if changed && e.audit != nil {
		e.audit.PlanChanged(p)
	}
	return nil
}

// hold puts the plan in a waiting state, saving and auditing only when the
// state or its reason changed (a plan waits through many ticks).
func (e *Engine) hold(ctx context.Context, p *plan.Plan, s plan.State, reason string, now time.Time) error {
	if p.State == s && p.Reason == reason {
		return nil
	}
	p.Set(s, reason, now)
	return e.save(ctx, p, now, true)
}

func (e *Engine) advance(ctx context.Context, p *plan.Plan, now time.Time) error {
	for {
		i := p.Next()
		if i < 0 {
			p.Set(plan.Succeeded, "every step ran or was skipped", now)
			return e.save(ctx, p, now, true)
		}
		st := &p.Steps[i]
		ex := e.executors[st.Kind]
		if ex == nil {
			if err := e.finish(ctx, p, i, plan.StepSkipped, "no executor configured for "+string(st.Kind), now); err != nil {
				return err
			}
			continue
		}
		if ok, why := ex.Applies(p.Subject); !ok {
			if err := e.finish(ctx, p, i, plan.StepSkipped, why, now); err != nil {
				return err
			}
			continue
		}
		if st.State == plan.StepStarted && !ex.Idempotent() {
			st.State, st.Finished, st.Error = plan.StepFailed, now, "interrupted while running; not run again because it is not idempotent: check its outcome"
			return e.fail(ctx, p, i, errors.New(st.Error), now)
		}
		if held, err := e.permitted(ctx, p, st.Kind, now); held || err != nil {
			return err
		}
		if !st.NextRetry.IsZero() && now.Before(st.NextRetry) {
			return nil
		}
		if p.State != plan.Running {
			p.Set(plan.Running, "", now)
		}
		if st.Started.IsZero() {
			st.Started = now
		}
		st.State, st.DryRun = plan.StepStarted, e.cfg.DryRun
		st.Attempts++
		// Saved before the call: a crash during it leaves the step
		// started, never pending, so it is not blindly run again.
		if err := e.save(ctx, p, now, false); err != nil {
			return err
		}
		out, err := ex.Run(ctx, p, e.cfg.DryRun)
		if err != nil {
			return e.retryOrFail(ctx, p, i, err, now)
		}
		state := plan.StepSucceeded
		if out.Skipped {
			state = plan.StepSkipped
		}
		if err := e.finish(ctx, p, i, state, out.Detail, now); err != nil {
			return err
		}
	}
}

// permitted applies the step's mode, the approval and the guard rails. It
// reports held when the plan must wait (its state then says why).
func (e *Engine) permitted(ctx context.Context, p *plan.Plan, kind xid.Step, now time.Time) (bool, error) {
	switch e.Mode(kind) {
	case Recommend:
		p.Set(plan.Recommended, fmt.Sprintf("step %s is in recommend mode: nothing more runs", kind), now)
		return true, e.save(ctx, p, now, true)
	case Approve:
		if p.Approval == nil {
			if now.Sub(p.Created) > e.cfg.ApprovalTTL {
				p.Set(plan.Expired, fmt.Sprintf("not approved within %s", e.cfg.ApprovalTTL), now)
				return true, e.save(ctx, p, now, true)
			}
			var a *plan.Approval
			var err error
			if e.approvals != nil {
				a, err = e.approvals.Approval(ctx, p)
			}
			if err != nil || a == nil {
				reason := fmt.Sprintf("step %s waits for approval of plan %s", kind, p.ID)
				if err != nil {
					reason += " (approvals unreadable: " + err.Error() + ")"
				}
				return true, e.hold(ctx, p, plan.AwaitingApproval, reason, now)
			}
			p.Approval = a
			p.Set(plan.Running, "approved by "+a.By+" via "+a.Via, now)
			if err := e.save(ctx, p, now, true); err != nil {
				return true, err
			}
		}
	}
	if !kind.Disruptive() {
		return false, nil
	}
	if !p.Acquired {
		if why := e.cfg.Guard.Admit(p, e.store.All(), e.fleet, now); why != "" {
			return true, e.hold(ctx, p, plan.Waiting, why, now)
		}
		p.Acquired = true
	}
	if why := e.cfg.Guard.Act(e.store.All(), now); why != "" {
		return true, e.hold(ctx, p, plan.Waiting, why, now)
	}
	return false, nil
}

func (e *Engine) finish(ctx context.Context, p *plan.Plan, i int, s plan.StepState, detail string, now time.Time) error {
	st := &p.Steps[i]
	st.State, st.Outcome, st.Finished, st.Error, st.NextRetry = s, detail, now, "", time.Time{}
	if err := e.save(ctx, p, now, false); err != nil {
		return err
	}
	if e.audit != nil {
		e.audit.StepFinished(p, i, nil)
	}
	return nil
}

func (e *Engine) retryOrFail(ctx context.Context, p *plan.Plan, i int, err error, now time.Time) error {
	st := &p.Steps[i]
	st.Error = err.Error()
	blocked := executor.IsBlocked(err)
	if blocked {
		// Waiting on a PDB or a conflict is not a failed attempt: the
		// step's time bound decides.
		st.Attempts--
	}
	spent := executor.IsFinal(err) || (!blocked && st.Attempts >= e.cfg.MaxAttempts) || (blocked && now.Sub(st.Started) >= e.cfg.BlockedTimeout)
	if spent {
		st.State, st.Finished = plan.StepFailed, now
		return e.fail(ctx, p, i, err, now)
	}
	st.State = plan.StepPending
	st.NextRetry = now.Add(wait(e.cfg.RetryInitial, e.cfg.RetryMax, max(st.Attempts, 1), now))
	if serr := e.save(ctx, p, now, false); serr != nil {
		return serr
	}
	if e.audit != nil {
		e.audit.StepFinished(p, i, err)
	}
	return nil
}

// wait is internal/backoff's wait after n failed attempts.
func wait(initial, maxWait time.Duration, n int, now time.Time) time.Duration {
	b := backoff.New(initial, maxWait)
	var w time.Duration
	for range n {
		w = b.Failed(now)
	}
	return w
}

func (e *Engine) fail(ctx context.Context, p *plan.Plan, i int, err error, now time.Time) error {
	p.Set(plan.Failed, fmt.Sprintf("step %s failed: %v", p.Steps[i].Kind, err), now)
	if serr := e.save(ctx, p, now, true); serr != nil {
		return serr
	}
	if e.audit != nil {
		e.audit.StepFinished(p, i, err)
	}
	return e.escalate(ctx, p, now)
}

// escalate delivers a failed plan's incident bundle, retrying on later
// ticks (with backoff) until the webhook takes it.
func (e *Engine) escalate(ctx context.Context, p *plan.Plan, now time.Time) error {
	ex := e.executors[xid.StepEscalate]
	if ex == nil {
		p.Escalated = true // nowhere to escalate: the audit record is all there is
		return e.save(ctx, p, now, false)
	}
	if !p.EscalationRetry.IsZero() && now.Before(p.EscalationRetry) {
		return nil
	}
	_, err := ex.Run(ctx, p, false)
	if e.audit != nil {
		e.audit.Escalated(p, err)
	}
	if err != nil {
		p.EscalationAttempts++
		p.EscalationRetry = now.Add(wait(e.cfg.RetryInitial, e.cfg.RetryMax, p.EscalationAttempts, now))
		return e.save(ctx, p, now, false)
	}
	p.Escalated, p.EscalationRetry = true, time.Time{}
	return e.save(ctx, p, now, false)
}
