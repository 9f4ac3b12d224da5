package accelschema

import "strings"

// AttrHealthReporter names who reported a health event that reached the
// remediator: set by the gateway's accelerator_sender processor from the
// sender's authenticated identity (never taken from the sender), and
// written into the remediation plan's evidence and audit record.
const AttrHealthReporter = "accelerator.health.reporter"

// OnHealthPath reports whether a log record of this event.name speaks for
// a node's devices: a health event, a finding (one may name a health
// action, which makes a plan) or a GPU reset report. Only the node's own
// agent may send these to a gateway that acts on them.
func OnHealthPath(eventName string) bool {
	return strings.HasPrefix(eventName, "accelerator.health.") || eventName == EventFinding || eventName == EventGPUReset
}

func init() {
	Attributes = append(Attributes, AttributeDef{AttrHealthReporter, "string", ScopeLog, nil, false,
		"On a health event, finding or GPU reset report that passed the gateway's sender check: the agent that sent it, " +
			"as `<service account user>/<pod>@<node>` from its verified token (`unauthenticated` where the check runs in its local mode)."})
}
