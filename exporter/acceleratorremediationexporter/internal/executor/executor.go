// Package executor is the interface every remediation action implements:
// Kubernetes (node condition, event, cordon, eviction of the device's
// holders, drain, workload restart, DRA device taint), AWS (EC2 reboot,
// Auto Scaling instance health, ECS container instance draining), the
// node-local GPU reset and the escalation webhook. The engine never
// branches on which one it runs.
package executor // import "github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"

import (
	"context"
	"errors"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Executor carries out one kind of step.
type Executor interface {
	// Step is the kind of step it carries out.
	Step() xid.Step
	// Applies reports whether the step can act on the subject at all (no
	// node name: no Kubernetes step; no instance id: no EC2 step). A step
	// that does not apply is skipped, with the reason.
	Applies(plan.Subject) (bool, string)
	// Idempotent reports whether running the step again after an
	// interruption has no further effect (a patch to the same state).
	// A step that is not (a reboot) is never run again: found started on
	// resume, its plan stops and is escalated.
	Idempotent() bool
	// Run carries out the step. dryRun asks the outside system to check
	// the request without applying it, where it can (Kubernetes
	// dryRun=All, EC2 DryRun); Outcome says what happened.
	Run(ctx context.Context, p *plan.Plan, dryRun bool) (Outcome, error)
}

// Outcome is what a step did, for the audit record.
type Outcome struct {
	Detail string
	// Skipped: there was nothing to do (no holder to evict, the node
	// already cordoned by someone else, a DRA API not served).
	Skipped bool
}

// Blocked is an error that a retry may clear without anything being wrong
// with the request: a PodDisruptionBudget that allows no disruption now, a
// conflicting update.
type Blocked struct{ Err error }

func (b *Blocked) Error() string { return "blocked: " + b.Err.Error() }
func (b *Blocked) Unwrap() error { return b.Err }

// IsBlocked reports whether err is a Blocked error.
func IsBlocked(err error) bool {
	var b *Blocked
	return errors.As(err, &b)
}

// Final is an error no retry can change: the step fails at once, without
// spending its attempts (an agent that reported its GPU reset failed will
// not reset it again for the same request).
type Final struct{ Err error }

func (f *Final) Error() string { return f.Err.Error() }
func (f *Final) Unwrap() error { return f.Err }

// IsFinal reports whether err is a Final error.
func IsFinal(err error) bool {
	var f *Final
	return errors.As(err, &f)
}

// Set is the executors by step kind.
type Set map[xid.Step]Executor

// Add registers executors.
func (s Set) Add(es ...Executor) {
	for _, e := range es {
		s[e.Step()] = e
	}
}
