package guard

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) // a Tuesday

func onNode(node, itype string, acquired bool, state plan.State) *plan.Plan {
	rp, _ := xid.PlanFor(xid.Lookup(79))
	p := plan.New(rp, plan.Subject{Node: node, InstanceType: itype}, plan.Evidence{}, t0)
	p.Acquired, p.State = acquired, state
	return p
}

func rails() Config {
	return Config{MaxNodes: 2, MaxPercentPerInstanceType: 50, NodeCooldown: time.Hour, ActionsPerHour: 3}
}

func TestMaxNodesLetsTheFirstTwoOfTenThrough(t *testing.T) {
	c := rails()
	c.MaxPercentPerInstanceType = 100
	var all []*plan.Plan
	admitted := 0
	for i := range 10 {
		p := onNode(fmt.Sprintf("n%d", i), "p5.48xlarge", false, plan.Running)
		all = append(all, p)
		if c.Admit(p, all, nil, t0) == "" {
			p.Acquired = true
			admitted++
		}
	}
	assert.Equal(t, 2, admitted)
	assert.Contains(t, c.Admit(all[5], all, nil, t0), "max_nodes: 2 nodes under remediation")
	// A second plan on a node already held takes no new node.
	again := onNode("n0", "p5.48xlarge", false, plan.Running)
	again.ID = "rp-again"
	assert.Empty(t, c.Admit(again, append(all, again), nil, t0))
	// A finished plan's node counts until its cooldown ran out; then the
	// next may go.
	all[0].Set(plan.Succeeded, "", t0)
	assert.Contains(t, c.Admit(all[5], all, nil, t0.Add(30*time.Minute)), "max_nodes")
	assert.Empty(t, c.Admit(all[5], all, nil, t0.Add(61*time.Minute)))
}

func TestPercentOfInstanceType(t *testing.T) {
	c := rails()
	c.MaxNodes = 100
	fleet := func(string) int { return 4 } // 50 % of 4 = 2
	a := onNode("a", "g5", true, plan.Running)
	b := onNode("b", "g5", true, plan.Running)
	other := onNode("x", "p5", true, plan.Running)
	next := onNode("c", "g5", false, plan.Running)
	assert.Contains(t, c.Admit(next, []*plan.Plan{a, b, other, next}, fleet, t0), "2 of 4 g5 nodes")
	assert.Empty(t, c.Admit(onNode("y", "p5", false, plan.Running), []*plan.Plan{a, b, other}, fleet, t0))
	// A pool of one may still be remediated.
	assert.Empty(t, c.Admit(next, []*plan.Plan{next}, func(string) int { return 1 }, t0))
}

func TestCooldown(t *testing.T) {
	c := rails()
	done := onNode("n", "", true, plan.Running)
	done.Set(plan.Succeeded, "", t0)
	p := onNode("n", "", false, plan.Running)
	p.ID = "rp-later"
	assert.Contains(t, c.Admit(p, []*plan.Plan{done, p}, nil, t0.Add(30*time.Minute)), "node_cooldown")
	assert.Empty(t, c.Admit(p, []*plan.Plan{done, p}, nil, t0.Add(61*time.Minute)))
}

func TestActionsPerHourAndWindows(t *testing.T) {
	c := rails()
	p := onNode("n", "", true, plan.Running)
	for i := range 3 {
		p.Steps[i+2].Started = t0.Add(time.Duration(i) * time.Minute) // cordon, drain, reboot: disruptive
	}
	p.Steps[0].Started = t0 // a condition is not counted
	assert.Contains(t, c.Act([]*plan.Plan{p}, t0.Add(10*time.Minute)), "actions_per_hour: 3")
	assert.Empty(t, c.Act([]*plan.Plan{p}, t0.Add(63*time.Minute)))

	c.MaintenanceWindows = []Window{{Days: []string{"tue"}, Start: "22:00", Duration: 4 * time.Hour}}
	require.NoError(t, c.Check())
	assert.Contains(t, c.Act(nil, t0), "outside every maintenance window")
	assert.Empty(t, c.Act(nil, time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)))
	assert.Empty(t, c.Act(nil, time.Date(2026, 12, 2, 1, 30, 0, 0, time.UTC)), "open past midnight into Wednesday")
	assert.NotEmpty(t, c.Act(nil, time.Date(2026, 12, 2, 2, 30, 0, 0, time.UTC)))
}

func TestValidate(t *testing.T) {
	c := rails()
	require.NoError(t, c.Check())
	c.MaxNodes, c.MaxPercentPerInstanceType, c.ActionsPerHour = 0, 150, 0
	c.MaintenanceWindows = []Window{{Start: "25:00", Days: []string{"funday"}}}
	err := c.Check()
	require.Error(t, err)
	for _, want := range []string{"max_nodes", "max_percent_per_instance_type", "actions_per_hour", "start \"25:00\"", "duration", "funday"} {
		assert.Contains(t, err.Error(), want)
	}
}
