// Package remediationplans is the in-process registry through which a
// running accelerator_remediation exporter shows its plans to the rest of
// the collector (the insights console) and takes an approval from it.
//
// The exporter registers a Source under its component ID in Start and
// unregisters it in Shutdown. Readers get snapshots: changing one changes
// nothing. An approval given here is not a shortcut: the exporter hands it
// to its engine, which takes it on its next tick exactly as it takes a
// node annotation (same audit record, same guard rails, same expiry), with
// Via "insights console". The approval is held in the process that took it:
// with several gateway replicas electing a leader, one given to a standby's
// console waits until that replica leads (the annotation reaches every
// replica, as the cluster does).
package remediationplans // import "github.com/otelcol-accel/otelcol-accel/internal/remediationplans"

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Via is what an approval through this registry records as its channel.
const Via = "insights console"

var (
	// ErrUnknownPlan: no plan with that id in the source.
	ErrUnknownPlan = errors.New("no such remediation plan")
	// ErrNotAwaiting: the plan is not waiting for an approval (it was
	// approved already, runs automatically, finished or expired).
	ErrNotAwaiting = errors.New("remediation plan is not awaiting approval")
	// ErrUnknownSource: no remediation exporter with that component ID is
	// running.
	ErrUnknownSource = errors.New("no running accelerator_remediation exporter with that id")
	// ErrNoApprover: an approval must name who gave it.
	ErrNoApprover = errors.New("an approval must name who approves")
)

// Pod is a holder of the failed device.
type Pod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

// Subject is what a plan acts on.
type Subject struct {
	Node        string `json:"node,omitempty"`
	DeviceID    string `json:"device_id,omitempty"`
	DeviceIndex int64  `json:"device_index"`
	Model       string `json:"model,omitempty"`
	InstanceID  string `json:"instance_id,omitempty"`
	// Pods are the holders the health event named.
	Pods []Pod `json:"pods,omitempty"`
}

// Evidence is what made the plan.
type Evidence struct {
	Event       string            `json:"event"`
	XID         int               `json:"xid,omitempty"`
	Description string            `json:"description"`
	Observed    time.Time         `json:"observed"`
	Attributes  map[string]string `json:"attributes,omitempty"`
}

// Step is one step of a plan. Mode is the step's configured mode
// (recommend, approve, automatic); State its progress (pending, started,
// succeeded, skipped, failed); Reason why the catalogue chose it; Outcome
// or Error what running it gave.
type Step struct {
	Kind     string    `json:"kind"`
	Mode     string    `json:"mode"`
	State    string    `json:"state"`
	Reason   string    `json:"reason"`
	Outcome  string    `json:"outcome,omitempty"`
	Error    string    `json:"error,omitempty"`
	Attempts int       `json:"attempts,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
	DryRun   bool      `json:"dry_run,omitempty"`
}

// Approval is who approved a plan, when and through what.
type Approval struct {
	By  string    `json:"by"`
	At  time.Time `json:"at"`
	Via string    `json:"via"`
}

// Plan is a read-only snapshot of one plan.
type Plan struct {
	ID          string   `json:"id"`
	Action      string   `json:"action"`
	FailureMode string   `json:"failure_mode"`
	Scope       string   `json:"scope"`
	Subject     Subject  `json:"subject"`
	Evidence    Evidence `json:"evidence"`
	Steps       []Step   `json:"steps"`
	// State is the plan's (recommended, awaiting_approval, waiting,
	// running, succeeded, failed, expired); Reason says why.
	State    string    `json:"state"`
	Reason   string    `json:"reason,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Finished time.Time `json:"finished,omitzero"`
	// Expires is when an unapproved plan expires (zero when it does not
	// wait for an approval).
	Expires  time.Time `json:"expires,omitzero"`
	Approval *Approval `json:"approval,omitempty"`
	// ApprovalHint is the kubectl command that approves the plan, for a
	// console to show next to its button.
	ApprovalHint string `json:"approval_hint,omitempty"`
}

// AwaitingApproval reports whether an approval would move the plan on.
func (p Plan) AwaitingApproval() bool { return p.State == "awaiting_approval" }

// Source is a running remediation exporter as the registry sees it.
type Source interface {
	// Plans returns snapshots of every plan the exporter keeps, oldest
	// first.
	Plans() []Plan
	// Approve approves a plan awaiting approval on behalf of who. It
	// returns ErrUnknownPlan or ErrNotAwaiting (wrapped) when it cannot;
	// nil means the engine will take the approval on its next tick.
	Approve(ctx context.Context, planID, who string) error
}

var (
	mu      sync.RWMutex
	sources = map[component.ID]Source{}
)

// Register makes src visible under id until the returned function is
// called. Registering an id twice replaces the earlier source; its
// unregister function then leaves the newer one alone.
func Register(id component.ID, src Source) (unregister func()) {
	mu.Lock()
	defer mu.Unlock()
	sources[id] = src
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if sources[id] == src {
			delete(sources, id)
		}
	}
}

// Lookup returns the source registered under id.
func Lookup(id component.ID) (Source, bool) {
	mu.RLock()
	defer mu.RUnlock()
	s, ok := sources[id]
	return s, ok
}

// IDs returns the registered component IDs, sorted.
func IDs() []component.ID {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]component.ID, 0, len(sources))
	for id := range sources {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Approve approves planID in the source registered under id.
func Approve(ctx context.Context, id component.ID, planID, who string) error {
	if who == "" {
		return ErrNoApprover
	}
	s, ok := Lookup(id)
	if !ok {
		return ErrUnknownSource
	}
	return s.Approve(ctx, planID, who)
}
