package xid

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

func stepsOf(p RemediationPlan) []Step {
	out := make([]Step, len(p.Steps))
	for i, ps := range p.Steps {
		out[i] = ps.Step
	}
	return out
}

// Every action the catalogue recommends has a plan, except the ones that
// ask for nothing to be done; every step has a reason and a known kind.
func TestEveryActionHasAPlan(t *testing.T) {
	known := map[Step]bool{}
	for _, st := range Steps {
		known[st] = true
	}
	for _, v := range s.EnumAction.Values {
		p, ok := PlanFor(Classification{Action: v.Value, FailureMode: s.FailureModeHardware})
		if v.Value == s.ActionNone || v.Value == s.ActionMonitor {
			assert.False(t, ok, v.Value)
			continue
		}
		require.True(t, ok, "no plan for action %s", v.Value)
		require.NotEmpty(t, p.Steps, v.Value)
		for _, ps := range p.Steps {
			assert.True(t, known[ps.Step], "%s: step %s not in Steps", v.Value, ps.Step)
			assert.NotEmpty(t, ps.Reason, "%s: step %s", v.Value, ps.Step)
		}
	}
	for code := range catalogue {
		c := Lookup(code)
		if _, ok := PlanFor(c); !ok {
			assert.Contains(t, []string{s.ActionNone, s.ActionMonitor}, c.Action, "XID %d", code)
		}
	}
}

// A device fault fences and empties only the device; an NVLink fault on
// the same action takes the node.
func TestScopeFollowsFailureMode(t *testing.T) {
	dbe, ok := PlanFor(Lookup(48))
	require.True(t, ok)
	assert.Equal(t, ScopeDevice, dbe.Scope)
	assert.Equal(t, []Step{StepSetNodeCondition, StepRecordEvent, StepTaintDevice, StepEvictHolders, StepResetGPU}, stepsOf(dbe))

	nvlink, ok := PlanFor(Lookup(74))
	require.True(t, ok)
	assert.Equal(t, ScopeNode, nvlink.Scope)
	assert.Equal(t, []Step{StepSetNodeCondition, StepRecordEvent, StepCordonNode, StepDrainNode, StepResetGPU}, stepsOf(nvlink))
	// The catalogue's own table is not changed by the override.
	again, _ := PlanFor(Lookup(48))
	assert.Equal(t, stepsOf(dbe), stepsOf(again))

	lost, _ := PlanFor(Lookup(79))
	assert.Equal(t, []Step{StepSetNodeCondition, StepRecordEvent, StepCordonNode, StepDrainNode, StepRebootInstance}, stepsOf(lost))

	app, _ := PlanFor(Lookup(13))
	assert.Equal(t, ScopeNone, app.Scope)
	assert.Equal(t, []Step{StepRecordEvent, StepRestartWorkload}, stepsOf(app))

	mps, _ := PlanFor(ForCondition(MPSDaemonDown))
	assert.Contains(t, stepsOf(mps), StepDrainECSInstance)
}

func TestDisruptive(t *testing.T) {
	assert.False(t, StepSetNodeCondition.Disruptive())
	assert.False(t, StepEscalate.Disruptive())
	assert.True(t, StepEvictHolders.Disruptive())
	assert.True(t, StepRebootInstance.Disruptive())
}
