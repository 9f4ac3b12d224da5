// Package plan holds remediation plans: what failed, where, the ordered
// steps the catalogue (internal/xid) chose, and how far each has got. A plan
// is a small state machine; every change is persisted (Store) before it has
// effects, so a restart resumes it and never runs a step twice.
package plan // import "github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// State of a plan.
type State string

const (
	// Recommended: the plan reached a step in recommend mode; it is logged
	// and shown, and nothing more runs.
	Recommended State = "recommended"
	// AwaitingApproval: the next step is in approve mode and no approval
	// for this plan has been seen yet.
	AwaitingApproval State = "awaiting_approval"
	// Waiting: a guard rail holds the plan back (too many nodes, cooldown,
	// actions per hour, outside a maintenance window); it is tried again.
	Waiting State = "waiting"
	// Running: steps are being carried out.
	Running State = "running"
	// Succeeded: every step ran or was skipped.
	Succeeded State = "succeeded"
	// Failed: a step failed after its retries, or its outcome is unknown;
	// the plan stopped and was escalated.
	Failed State = "failed"
	// Expired: the approval did not come in time.
	Expired State = "expired"
)

// States lists every plan state (the plans-by-state metric reports each).
var States = []State{Recommended, AwaitingApproval, Waiting, Running, Succeeded, Failed, Expired}

// Terminal reports whether nothing more happens to a plan in this state.
func (s State) Terminal() bool {
	return s == Succeeded || s == Failed || s == Expired || s == Recommended
}

// StepState is how far one step has got.
type StepState string

const (
	StepPending StepState = "pending"
	// StepStarted is persisted before the executor is called: found on
	// resume, it means the call may or may not have taken effect.
	StepStarted   StepState = "started"
	StepSucceeded StepState = "succeeded"
	StepSkipped   StepState = "skipped"
	StepFailed    StepState = "failed"
)

// Pod is a holder of the failed device.
type Pod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

// Subject is what a plan acts on, from the health event's resource.
type Subject struct {
	Node         string `json:"node,omitempty"`
	DeviceID     string `json:"device_id,omitempty"`
	DeviceIndex  int64  `json:"device_index"`
	Model        string `json:"model,omitempty"`
	InstanceID   string `json:"instance_id,omitempty"`
	InstanceType string `json:"instance_type,omitempty"`
	Region       string `json:"region,omitempty"`
	Zone         string `json:"zone,omitempty"`
	ECSCluster   string `json:"ecs_cluster,omitempty"`
	// DRA identity of the device, when a claim allocates it.
	DRADriver string `json:"dra_driver,omitempty"`
	DRAPool   string `json:"dra_pool,omitempty"`
	DRADevice string `json:"dra_device,omitempty"`
	// Holders are the pods holding the device, as the attributes processor
	// attached them; HoldersKnown is false when the event named none but
	// said the device is allocated (a shared device's event names no pod).
	Holders      []Pod `json:"holders,omitempty"`
	HoldersKnown bool  `json:"holders_known"`
	// Driver is the driver version the event carried (a recent change is
	// evidence for an investigator).
	Driver string `json:"driver_version,omitempty"`
}

// Evidence is what made the plan: the health event and readings.
type Evidence struct {
	Event       string            `json:"event"`
	XID         int               `json:"xid,omitempty"`
	Description string            `json:"description"`
	Observed    time.Time         `json:"observed"`
	Attributes  map[string]string `json:"attributes,omitempty"`
}

// Step is one step of a plan.
type Step struct {
	Kind      xid.Step  `json:"kind"`
	Reason    string    `json:"reason"`
	State     StepState `json:"state"`
	Attempts  int       `json:"attempts,omitempty"`
	Started   time.Time `json:"started,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`
	Outcome   string    `json:"outcome,omitempty"`
	Error     string    `json:"error,omitempty"`
	NextRetry time.Time `json:"next_retry,omitzero"`
	DryRun    bool      `json:"dry_run,omitempty"`
}

// Approval records who approved a plan and when.
type Approval struct {
	By  string    `json:"by"`
	At  time.Time `json:"at"`
	Via string    `json:"via"`
}

// Plan is one remediation plan.
type Plan struct {
	ID          string    `json:"id"`
	Action      string    `json:"action"`
	FailureMode string    `json:"failure_mode"`
	Scope       xid.Scope `json:"scope"`
	Subject     Subject   `json:"subject"`
	Evidence    Evidence  `json:"evidence"`
	Steps       []Step    `json:"steps"`
	State       State     `json:"state"`
	// Reason says why the plan is in its state (the guard rail that holds
	// it, the error that stopped it).
	Reason   string    `json:"reason,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Finished time.Time `json:"finished,omitzero"`
	Approval *Approval `json:"approval,omitempty"`
	// Escalated is set once a failed plan's incident bundle was
	// delivered; until then it is retried with backoff.
	Escalated          bool      `json:"escalated,omitempty"`
	EscalationAttempts int       `json:"escalation_attempts,omitempty"`
	EscalationRetry    time.Time `json:"escalation_retry,omitzero"`
	// Acquired is set once the plan holds its node against the guard
	// rails (its first disruptive step was allowed).
	Acquired bool `json:"acquired,omitempty"`
	// Reset is the node agent's last report on the GPU reset this plan
	// asked for (the reset_gpu step reads it).
	Reset *ResetReport `json:"reset,omitempty"`
}

// ResetReport is what the agent on the device's node said about a reset:
// succeeded, failed or waiting (accelschema's remediation outcomes).
type ResetReport struct {
	Device  string    `json:"device"`
	Outcome string    `json:"outcome"`
	Detail  string    `json:"detail,omitempty"`
	At      time.Time `json:"at"`
}

// New makes a plan from the catalogue's steps.
func New(rp xid.RemediationPlan, subj Subject, ev Evidence, now time.Time) *Plan {
	p := &Plan{
		Action:      rp.Action,
		FailureMode: rp.FailureMode,
		Scope:       rp.Scope,
		Subject:     subj,
		Evidence:    ev,
		State:       Running,
		Created:     now,
		Updated:     now,
	}
	for _, ps := range rp.Steps {
		p.Steps = append(p.Steps, Step{Kind: ps.Step, Reason: ps.Reason, State: StepPending})
	}
	p.ID = idFor(p)
	return p
}

// Key identifies what a plan is about: one open plan per device (or node,
// for node-wide plans) and action, so a recurring XID does not pile up
// plans.
func (p *Plan) Key() string {
	if p.Scope == xid.ScopeNode {
		return p.Subject.Node + "|" + p.Subject.InstanceID + "|" + p.Action
	}
	return p.Subject.Node + "|" + p.Subject.InstanceID + "|" + p.Subject.DeviceID + "|" + p.Action
}

// NodeKey is what guard rails count: the node, else the instance.
func (p *Plan) NodeKey() string {
	if p.Subject.Node != "" {
		return p.Subject.Node
	}
	return p.Subject.InstanceID
}

// idFor is short enough to type into `kubectl annotate` and unique per key
// and creation time.
func idFor(p *Plan) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s|%d", p.Key(), p.Created.UnixNano()))
	return "rp-" + hex.EncodeToString(h[:5])
}

// Next returns the index of the first step not yet finished, or -1.
func (p *Plan) Next() int {
	for i := range p.Steps {
		switch p.Steps[i].State {
		case StepPending, StepStarted:
			return i
		}
	}
	return -1
}

// Set moves the plan to a state, with the reason.
func (p *Plan) Set(s State, reason string, now time.Time) {
	p.State, p.Reason, p.Updated = s, reason, now
	if s.Terminal() {
		p.Finished = now
	}
}
