package acceleratorsenderprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/senderauth"
)

// Reasons a sender may not speak for a node (the reason attribute).
const (
	reasonUnauthenticated = "unauthenticated"
	reasonNotAgent        = "not_agent"
	reasonUnbound         = "unbound"
	reasonNoNode          = "no_node"
	reasonOtherNode       = "other_node"
)

// reporterUnauthenticated names the reporter of what the local mode lets
// through without an identity.
const reporterUnauthenticated = "unauthenticated"

// sender is who sent one request, as the check sees it.
type sender struct {
	id            senderauth.Identity
	authenticated bool
}

// verdict says whether the sender may speak for the node res names: the
// node's own agent may (an agent service account whose token is bound to a
// pod on that node); so may anyone without an identity in the local mode.
// reporter names the sender for the audit; reason why not.
func (p *senderProcessor) verdict(s sender, res pcommon.Map) (reporter, reason string) {
	if !s.authenticated {
		if p.cfg.AcceptUnauthenticated {
			return reporterUnauthenticated, ""
		}
		return "", reasonUnauthenticated
	}
	if !p.agents[s.id.Username] {
		return "", reasonNotAgent
	}
	if s.id.NodeName == "" {
		return "", reasonUnbound
	}
	node := nodeOf(res)
	if node == "" {
		return "", reasonNoNode
	}
	if node != s.id.NodeName {
		return "", reasonOtherNode
	}
	return s.id.String(), ""
}

// nodeOf is the node a resource speaks for: k8s.node.name, which the
// remediator acts on, else host.name.
func nodeOf(res pcommon.Map) string {
	for _, key := range []string{accelschema.AttrK8sNodeName, accelschema.AttrHostName} {
		if v, ok := res.Get(key); ok && v.AsString() != "" {
			return v.AsString()
		}
	}
	return ""
}
