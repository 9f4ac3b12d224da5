// Package escalate posts an incident bundle to a webhook (an on-call
// system, an investigation agent): the device and its holders, the failure
// mode, the plan with every step's state, the event that made it, the
// device's recent health events and the changes seen on it. The schema is
// documented in docs/remediation.md ("Incident bundle") and versioned by
// SchemaVersion.
package escalate // import "github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/escalate"

import (
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

// SchemaVersion is the bundle's schema version; it changes only when a
// field changes meaning or goes away.
const SchemaVersion = "1"

// Kind names the document.
const Kind = "accelerator.remediation.incident"

// Bundle is what the webhook receives.
type Bundle struct {
	SchemaVersion string `json:"schema_version"`
	Kind          string `json:"kind"`
	// Sent is when this delivery was made (retries have later times).
	Sent time.Time `json:"sent"`
	// Reason says why the plan is escalated: a failed step, or a plan whose
	// escalate step hands the case to a person.
	Reason      string        `json:"reason"`
	Device      plan.Subject  `json:"device"`
	FailureMode string        `json:"failure_mode"`
	Action      string        `json:"action"`
	Plan        *plan.Plan    `json:"plan"`
	Evidence    plan.Evidence `json:"evidence"`
	// RecentEvents are the device's health events in the metrics window.
	RecentEvents []Event `json:"recent_events"`
	// RecentChanges are changes seen on the device (driver version) and
	// its node (labels) in the metrics window, oldest first.
	RecentChanges []Change `json:"recent_changes"`
	// RecentMetrics are the device's readings in the metrics window, per
	// series (metric name and data point attributes).
	RecentMetrics []Series `json:"recent_metrics"`
}

// Evidence is what the exporter kept about a device.
type Evidence struct {
	Events  []Event
	Changes []Change
	Metrics []Series
}

// Series is one metric series of the device.
type Series struct {
	Metric     string            `json:"metric"`
	Attributes map[string]string `json:"attributes,omitempty"`
	Points     []Point           `json:"points"`
}

// Point is one reading.
type Point struct {
	Time  time.Time `json:"time"`
	Value float64   `json:"value"`
}

// Event is one recent health event of the device.
type Event struct {
	Time        time.Time `json:"time"`
	Name        string    `json:"name"`
	XID         int       `json:"xid,omitempty"`
	FailureMode string    `json:"failure_mode,omitempty"`
	Action      string    `json:"action,omitempty"`
	Description string    `json:"description,omitempty"`
}

// NodeLabelPrefix starts the What of a node label change: a label added,
// changed or removed on the device's node (From empty: added; To empty:
// removed), as the remediator's node watch saw it.
const NodeLabelPrefix = "k8s.node.label."

// Change is a change seen on the device (its driver version, What
// hw.driver_version) or on its node (a label, What NodeLabelPrefix + key).
type Change struct {
	Time time.Time `json:"time"`
	What string    `json:"what"`
	From string    `json:"from"`
	To   string    `json:"to"`
}
