package acceleratork8sreceiver

import (
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver/internal/lifecycle"
)

// observeNodeClaim follows Karpenter's NodeClaims that ask for
// accelerators: one that could not be launched for want of capacity is
// counted in the unschedulable gauge (source karpenter) while it exists,
// and logged once per claim and reason. Karpenter deletes such a claim
// soon after (and makes another), so one deleted since the last flush is
// still counted at that flush: every failure shows in at least one point.
func (s *state) observeNodeClaim(c lifecycle.NodeClaim, now time.Time) {
	if len(c.Resources) == 0 || !c.Insufficient {
		delete(s.claims, c.UID) // launched after all, or no accelerators
		return
	}
	if _, ok := s.claims[c.UID]; !ok && len(s.claims) >= maxTracked {
		return
	}
	s.claims[c.UID] = c
	key := c.UID + "\x00" + c.Reason
	if s.claimLogged[key] {
		return
	}
	if len(s.claimLogged) < maxTracked {
		s.claimLogged[key] = true
	}
	s.appendNodeClaim(c, now)
}

func (s *state) forgetNodeClaim(uid string) {
	if c, ok := s.claims[uid]; ok {
		s.claimsGone[uid] = c
	}
	delete(s.claims, uid)
	for k := range s.claimLogged {
		if strings.HasPrefix(k, uid+"\x00") {
			delete(s.claimLogged, k)
		}
	}
}

// claimCounts adds the failed NodeClaims to the gauge's counts and lets go
// of those deleted since the last flush.
func (s *state) claimCounts(counts map[gaugeKey]int64) {
	for _, m := range []map[string]lifecycle.NodeClaim{s.claims, s.claimsGone} {
		for _, c := range m {
			for _, res := range c.Resources {
				counts[gaugeKey{res, c.Placement.InstanceType, c.Placement.Zone, accelschema.CapacitySourceKarpenter}]++
			}
		}
	}
	clear(s.claimsGone)
}

func (s *state) appendNodeClaim(c lifecycle.NodeClaim, now time.Time) {
	rl := s.logs.ResourceLogs().AppendEmpty()
	if s.cfg.ClusterName != "" {
		rl.Resource().Attributes().PutStr(accelschema.AttrK8sClusterName, s.cfg.ClusterName)
	}
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	lr := sl.LogRecords().AppendEmpty()
	at := c.At
	if at.IsZero() {
		at = now
	}
	lr.SetTimestamp(pcommon.NewTimestampFromTime(at))
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(now))
	lr.SetEventName(accelschema.EventUnschedulable)
	lr.SetSeverityNumber(plog.SeverityNumberWarn)
	lr.SetSeverityText("WARN")
	a := lr.Attributes()
	a.PutStr(accelschema.AttrEventName, accelschema.EventUnschedulable)
	a.PutStr(accelschema.AttrCapacityResource, strings.Join(c.Resources, ","))
	a.PutStr(accelschema.AttrCapacityInstanceType, c.Placement.InstanceType)
	a.PutStr(accelschema.AttrCapacityZone, c.Placement.Zone)
	a.PutStr(accelschema.AttrCapacitySource, accelschema.CapacitySourceKarpenter)
	a.PutStr(accelschema.AttrK8sReason, c.Reason)
	a.PutStr(accelschema.AttrCapacityNodeClaim, c.Name)
	body := "Karpenter could not launch NodeClaim " + c.Name + " (" + strings.Join(c.Resources, ",") + ", instance type " + c.Placement.InstanceType +
		", zone " + c.Placement.Zone + "): " + c.Reason
	if c.Message != "" {
		body += ": " + c.Message
	}
	lr.Body().SetStr(body)
}
