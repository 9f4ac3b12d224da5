package acceleratorremediationexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/remediationplans"
)

// The console's path: the registry shows the waiting plan; an approval
// through it is taken by the engine like an annotation, and the holder is
// evicted only then.
func TestConsoleApprovalThroughTheRegistry(t *testing.T) {
	needServer(t)
	k := admin()
	k.mkNode(t, "cons-1", "p5.48xlarge")
	k.mkNamespace(t, "team-cons")
	k.mkPod(t, "team-cons", "train-0", "cons-1", nil)
	clk := &clock{t: t0}
	h := start(t, approveMode(testConfig()), clk, nil)
	h.send(event{node: "cons-1", device: "GPU-48", pod: "train-0", namespace: "team-cons", xid: 48})
	h.tick()

	src, ok := remediationplans.Lookup(h.e.set.ID)
	require.True(t, ok, "Start registers the exporter")
	ps := src.Plans()
	require.Len(t, ps, 1)
	p := ps[0]
	assert.Equal(t, "awaiting_approval", p.State)
	assert.Equal(t, "cons-1", p.Subject.Node)
	assert.Equal(t, []remediationplans.Pod{{Namespace: "team-cons", Name: "train-0"}}, p.Subject.Pods)
	assert.Equal(t, t0.Add(h.e.cfg.ApprovalTTL), p.Expires)
	assert.Equal(t, "kubectl annotate node cons-1 "+DefaultPrefix+"/approve="+p.ID, p.ApprovalHint)
	require.NotEmpty(t, p.Steps)
	assert.Equal(t, "approve", p.Steps[0].Mode)
	assert.Equal(t, "pending", p.Steps[0].State)
	p.Steps[0].State = "changed" // a snapshot: the plan is untouched
	assert.Equal(t, "pending", src.Plans()[0].Steps[0].State)

	ctx := context.Background()
	assert.ErrorIs(t, remediationplans.Approve(ctx, h.e.set.ID, "rp-nothere", "alice"), remediationplans.ErrUnknownPlan)
	assert.ErrorIs(t, remediationplans.Approve(ctx, h.e.set.ID, p.ID, ""), remediationplans.ErrNoApprover)
	assert.False(t, k.evicted(t, "team-cons", "train-0"))

	clk.add(time.Minute)
	require.NoError(t, remediationplans.Approve(ctx, h.e.set.ID, p.ID, "alice"))
	assert.False(t, k.evicted(t, "team-cons", "train-0"), "the engine acts on its tick, not the click")
	h.tick()
	got := h.only()
	require.Equal(t, plan.Succeeded, got.State, got.Reason)
	require.NotNil(t, got.Approval)
	assert.Equal(t, plan.Approval{By: "alice", At: t0.Add(time.Minute), Via: remediationplans.Via}, *got.Approval)
	assert.True(t, k.evicted(t, "team-cons", "train-0"))
	steps := h.logs.FilterMessage("accelerator_remediation: step succeeded").All()
	require.NotEmpty(t, steps)
	assert.Equal(t, "alice", steps[0].ContextMap()["approved_by"])

	assert.ErrorIs(t, remediationplans.Approve(ctx, h.e.set.ID, p.ID, "bob"), remediationplans.ErrNotAwaiting, "approved once")
	require.NoError(t, h.e.Shutdown(ctx))
	_, ok = remediationplans.Lookup(h.e.set.ID)
	assert.False(t, ok, "Shutdown unregisters")
}

func TestConsoleApprovalAfterExpiryRefused(t *testing.T) {
	needServer(t)
	k := admin()
	k.mkNode(t, "cons-2", "p5.48xlarge")
	clk := &clock{t: t0}
	cfg := approveMode(testConfig())
	cfg.ApprovalTTL = 10 * time.Minute
	h := start(t, cfg, clk, nil)
	h.send(event{node: "cons-2", device: "GPU-1", xid: 79})
	h.tick()
	id := h.only().ID
	clk.add(11 * time.Minute)
	assert.ErrorIs(t, remediationplans.Approve(context.Background(), h.e.set.ID, id, "alice"), remediationplans.ErrNotAwaiting)
	h.tick()
	assert.Equal(t, plan.Expired, h.only().State)
	assert.False(t, k.node(t, "cons-2").Spec.Unschedulable)
}
