package acceleratorremediationexporter

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// waitFor polls a condition that depends on the API server's Lease (real
// time, not the test's clock) with a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func leaderConfig(lease string) *Config {
	cfg := testConfig()
	cfg.LeaderElection.Enabled = true
	cfg.LeaderElection.Namespace = testNamespace
	cfg.LeaderElection.LeaseName = lease
	cfg.LeaderElection.LeaseDuration = 4 * time.Second
	cfg.LeaderElection.RenewDeadline = 3 * time.Second
	cfg.LeaderElection.RetryPeriod = 500 * time.Millisecond
	return cfg
}

// stepRuns counts the steps of kind this replica ran to an outcome.
func stepRuns(h *harness, kind xid.Step) int {
	n := 0
	for _, e := range h.logs.All() {
		if strings.HasPrefix(e.Message, "accelerator_remediation: step ") && e.ContextMap()["step"] == string(kind) {
			n++
		}
	}
	return n
}

// Two replicas share a Lease and the plans (ConfigMaps in the Lease's
// namespace). The leader runs the plan's first step and stops; the standby
// takes the Lease, reads the plan as the leader left it and carries on from
// the second step: the first is not run again.
func TestStandbyResumesTheLeadersPlan(t *testing.T) {
	needServer(t)
	k := admin()
	k.mkNode(t, "handover-1", "p5.48xlarge")
	cfg := leaderConfig("remediator-handover-test")
	cfg.Mode = engine.Approve
	cfg.Modes = map[string]engine.Mode{string(xid.StepSetNodeCondition): engine.Automatic}
	clk := &clock{t: t0}
	t.Setenv("K8S_POD_NAME", "replica-a")
	a := start(t, cfg, clk, nil)
	waitFor(t, "replica-a to lead", a.e.elector.Leading)
	t.Setenv("K8S_POD_NAME", "replica-b")
	b := start(t, cfg, clk, nil)

	a.send(event{node: "handover-1", device: "GPU-1", xid: 79})
	a.tick()
	p := a.only()
	assert.Equal(t, plan.AwaitingApproval, p.State, "step 1 ran; step 2 waits for approval")
	assert.Equal(t, plan.StepSucceeded, p.Steps[0].State)
	require.NotNil(t, condition(k.node(t, "handover-1")), "the leader set the node condition")

	b.tick()
	assert.False(t, b.e.elector.Leading())
	seen := b.only()
	assert.Equal(t, p.ID, seen.ID, "the standby reads the leader's plan from the cluster")
	assert.Equal(t, plan.AwaitingApproval, seen.State)
	assert.Zero(t, stepRuns(b, xid.StepSetNodeCondition)+stepRuns(b, xid.StepRecordEvent), "a standby runs nothing")

	require.NoError(t, a.e.Shutdown(context.Background())) // releases the lease
	waitFor(t, "replica-b to take over", b.e.elector.Leading)
	k.approve(t, "handover-1", p.ID)
	clk.add(time.Minute)
	b.tick()
	got := b.only()
	assert.Equal(t, plan.Succeeded, got.State, "%s", got.Reason)
	assert.Zero(t, stepRuns(b, xid.StepSetNodeCondition), "the new leader did not repeat the done step")
	assert.Equal(t, 1, stepRuns(b, xid.StepRecordEvent), "it did step 2")
	assert.Equal(t, 1, stepRuns(a, xid.StepSetNodeCondition))
	assert.Zero(t, stepRuns(a, xid.StepRecordEvent))
	assert.Equal(t, 1, got.Steps[0].Attempts)
	assert.Equal(t, t0, got.Steps[0].Started, "step 1 is the old leader's run")
	assert.True(t, k.node(t, "handover-1").Spec.Unschedulable, "the new leader went on to the cordon")
	assert.Equal(t, 1, b.logs.FilterMessage("accelerator_remediation: leadership changed").Len())
}

// Events that reach the standby make plans too (in the cluster); the
// leader acts on them. Two replicas that each made a plan for the same
// device keep one: the younger, untouched one joins the older.
func TestPlansFromTheStandbyReachTheLeader(t *testing.T) {
	needServer(t)
	k := admin()
	k.mkNode(t, "handover-2", "p5.48xlarge")
	cfg := leaderConfig("remediator-standby-test")
	clk := &clock{t: t0}
	t.Setenv("K8S_POD_NAME", "replica-c")
	a := start(t, cfg, clk, nil)
	waitFor(t, "replica-c to lead", a.e.elector.Leading)
	t.Setenv("K8S_POD_NAME", "replica-d")
	b := start(t, cfg, clk, nil)

	b.send(event{node: "handover-2", device: "GPU-2", xid: 48})
	clk.add(time.Second)
	a.send(event{node: "handover-2", device: "GPU-2", xid: 48}) // a has not read b's plan yet
	first := b.only()
	a.tick()
	got := a.only()
	assert.Equal(t, first.ID, got.ID, "the standby's older plan is kept, the leader's duplicate joined it")
	assert.Equal(t, plan.Recommended, got.State, "the leader advanced the standby's plan")
	joined := a.logs.FilterMessage("accelerator_remediation: plan joins the open plan of the same device and action").All()
	require.Len(t, joined, 1)
	audited := joined[0].ContextMap()
	assert.Equal(t, first.ID, audited["joins"])
	assert.NotEqual(t, first.ID, audited["plan"])
	assert.Equal(t, "GPU-2", audited["device"], "the removal is audited like every plan change")
	assert.Equal(t, "handover-2", audited["node"])
	assert.Equal(t, first.Action, audited["action"])
	assert.EqualValues(t, 48, audited["xid"])
	b.tick()
	assert.Equal(t, plan.Recommended, b.only().State)
}
