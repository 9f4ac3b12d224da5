package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/guard"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/filestoragetest"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// The engine is tested for real: the real plan store (over contrib's
// file_storage where a restart matters), the real guard rails and backoff.
// Only the executors and the approval source, the outside world's
// boundary, are fakes.

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// world records every call the engine makes on the outside world, in order.
type world struct {
	mu    sync.Mutex
	calls []string
}

func (w *world) record(s string) { w.mu.Lock(); w.calls = append(w.calls, s); w.mu.Unlock() }

func (w *world) log() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls...)
}

func (w *world) count(s string) int {
	n := 0
	for _, c := range w.log() {
		if c == s {
			n++
		}
	}
	return n
}

// crash is what a fake executor panics with to stop the process in the
// middle of its call.
type crash struct{}

// fake is an executor whose behaviour a test scripts per call.
type fake struct {
	w          *world
	step       xid.Step
	idempotent bool
	// results are returned in order, then nil forever; a crash{} error
	// panics instead of returning (the process dies mid-call).
	results []error
	applies string // non-empty: the step does not apply, for this reason
	calls   int
}

func (f *fake) Step() xid.Step { return f.step }
func (f *fake) Applies(plan.Subject) (bool, string) {
	return f.applies == "", f.applies
}
func (f *fake) Idempotent() bool { return f.idempotent }
func (f *fake) Run(_ context.Context, p *plan.Plan, dryRun bool) (executor.Outcome, error) {
	f.w.record(fmt.Sprintf("%s %s%s", f.step, p.Subject.Node, map[bool]string{true: " dry-run"}[dryRun]))
	n := f.calls
	f.calls++
	if n < len(f.results) && f.results[n] != nil {
		if errors.Is(f.results[n], errCrash) {
			panic(crash{})
		}
		return executor.Outcome{}, f.results[n]
	}
	return executor.Outcome{Detail: "done"}, nil
}

var errCrash = errors.New("crash")

// fakes returns an idempotent fake for every step but the reboot (which
// is not idempotent, as in the real executors).
func fakes(w *world) map[xid.Step]*fake {
	out := map[xid.Step]*fake{}
	for _, s := range xid.Steps {
		out[s] = &fake{w: w, step: s, idempotent: s != xid.StepRebootInstance}
	}
	return out
}

func set(fs map[xid.Step]*fake) executor.Set {
	s := executor.Set{}
	for _, f := range fs {
		s.Add(f)
	}
	return s
}

// approvals is the approval source (the node annotation): a test grants
// plans by id.
type approvals struct {
	mu      sync.Mutex
	granted map[string]*plan.Approval
	err     error
}

func (a *approvals) grant(id, by string, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.granted == nil {
		a.granted = map[string]*plan.Approval{}
	}
	a.granted[id] = &plan.Approval{By: by, At: at, Via: "test"}
}

func (a *approvals) Approval(_ context.Context, p *plan.Plan) (*plan.Approval, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.granted[p.ID], a.err
}

func config() Config {
	return Config{
		DefaultMode:    Automatic,
		ApprovalTTL:    time.Hour,
		Guard:          guard.Config{MaxNodes: 10, MaxPercentPerInstanceType: 100, ActionsPerHour: 1000},
		RetryInitial:   time.Second,
		RetryMax:       4 * time.Second,
		MaxAttempts:    3,
		BlockedTimeout: 10 * time.Minute,
	}
}

func newPlan(t *testing.T, node string, code int, at time.Time) *plan.Plan {
	t.Helper()
	rp, ok := xid.PlanFor(xid.Lookup(code))
	require.True(t, ok, "XID %d has a plan", code)
	return plan.New(rp, plan.Subject{Node: node, DeviceID: "GPU-" + node, InstanceID: "i-" + node}, plan.Evidence{XID: code}, at)
}

func add(t *testing.T, s *plan.Store, p *plan.Plan) *plan.Plan {
	t.Helper()
	require.NoError(t, s.Save(context.Background(), p))
	return p
}

func get(t *testing.T, s *plan.Store, id string) *plan.Plan {
	t.Helper()
	p, ok := s.Get(id)
	require.True(t, ok, "plan %s kept", id)
	return p
}

func states(p *plan.Plan) []plan.StepState {
	out := make([]plan.StepState, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.State
	}
	return out
}

func TestStepsRunInOrderOnceEach(t *testing.T) {
	w := &world{}
	s := plan.NewStore(nil, time.Hour)
	p := add(t, s, newPlan(t, "n1", 79, t0)) // condition, event, cordon, drain, reboot
	e := New(config(), s, set(fakes(w)), nil, nil, nil)

	require.NoError(t, e.Tick(context.Background(), t0))
	assert.Equal(t, []string{"set_node_condition n1", "record_event n1", "cordon_node n1", "drain_node n1", "reboot_instance n1"}, w.log())
	got := get(t, s, p.ID)
	assert.Equal(t, plan.Succeeded, got.State)
	for _, st := range got.Steps {
		assert.Equal(t, plan.StepSucceeded, st.State, st.Kind)
		assert.Equal(t, 1, st.Attempts, st.Kind)
	}
	require.NoError(t, e.Tick(context.Background(), t0.Add(time.Minute)))
	assert.Len(t, w.log(), 5, "a finished plan runs nothing more")
}

func TestStepThatDoesNotApplyOrHasNoExecutorIsSkipped(t *testing.T) {
	w := &world{}
	fs := fakes(w)
	fs[xid.StepTaintDevice].applies = "no DRA allocation"
	ex := set(fs)
	delete(ex, xid.StepResetGPU)
	s := plan.NewStore(nil, time.Hour)
	p := add(t, s, newPlan(t, "n1", 48, t0)) // condition, event, taint_device, evict, reset
	require.NoError(t, New(config(), s, ex, nil, nil, nil).Tick(context.Background(), t0))
	got := get(t, s, p.ID)
	assert.Equal(t, plan.Succeeded, got.State)
	assert.Equal(t, []plan.StepState{plan.StepSucceeded, plan.StepSucceeded, plan.StepSkipped, plan.StepSucceeded, plan.StepSkipped}, states(got))
	assert.Equal(t, "no DRA allocation", got.Steps[2].Outcome)
	assert.Contains(t, got.Steps[4].Outcome, "no executor configured for reset_gpu")
	assert.Zero(t, w.count("taint_device n1"), "a step that does not apply is not called")
}

func TestRecommendStopsBeforeTheStep(t *testing.T) {
	w := &world{}
	cfg := config()
	cfg.Modes = map[xid.Step]Mode{xid.StepCordonNode: Recommend}
	s := plan.NewStore(nil, time.Hour)
	p := add(t, s, newPlan(t, "n1", 79, t0))
	require.NoError(t, New(cfg, s, set(fakes(w)), nil, nil, nil).Tick(context.Background(), t0))
	got := get(t, s, p.ID)
	assert.Equal(t, plan.Recommended, got.State)
	assert.Contains(t, got.Reason, "cordon_node is in recommend mode")
	assert.Equal(t, []string{"set_node_condition n1", "record_event n1"}, w.log(), "only the automatic steps before it ran")
}

// startStorage starts file_storage over dir and returns a client for the
// plans, as the exporter gets one.
func startStorage(t *testing.T, dir string) (extension.Extension, storage.Client) {
	t.Helper()
	ext, _ := filestoragetest.StartNoCleanup(t, dir)
	c, err := ext.(storage.Extension).GetClient(context.Background(), component.KindExporter, component.MustNewID("accelerator_remediation"), "plans")
	require.NoError(t, err)
	return ext, c
}

// run is one process: a store loaded from dir's file_storage and an engine.
type run struct {
	ext    extension.Extension
	client storage.Client
	store  *plan.Store
	engine *Engine
}

func startRun(t *testing.T, dir string, cfg Config, ex executor.Set, a Approvals) *run {
	t.Helper()
	ext, c := startStorage(t, dir)
	s := plan.NewStore(c, 24*time.Hour)
	require.NoError(t, s.Load(context.Background()))
	return &run{ext: ext, client: c, store: s, engine: New(cfg, s, ex, a, nil, nil)}
}

func (r *run) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, r.client.Close(context.Background()))
	require.NoError(t, r.ext.Shutdown(context.Background()))
}

// tickCrashing ticks and reports whether an executor crashed the process.
func tickCrashing(t *testing.T, e *Engine, now time.Time) (crashed bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	require.NoError(t, e.Tick(context.Background(), now))
	return false
}

// The process dies in the middle of the cordon: after a restart the steps
// already done are not run again; the interrupted idempotent step runs
// once more (a patch to the same state) and the plan carries on.
func TestRestartResumesWithoutRepeatingDoneSteps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "storage")
	w := &world{}
	fs := fakes(w)
	fs[xid.StepCordonNode].results = []error{errCrash}
	r := startRun(t, dir, config(), set(fs), nil)
	p := add(t, r.store, newPlan(t, "n1", 79, t0))
	require.True(t, tickCrashing(t, r.engine, t0), "the cordon crashed the process")
	r.stop(t)
	assert.Equal(t, []string{"set_node_condition n1", "record_event n1", "cordon_node n1"}, w.log())

	r = startRun(t, dir, config(), set(fs), nil)
	defer r.stop(t)
	resumed := get(t, r.store, p.ID)
	assert.Equal(t, []plan.StepState{plan.StepSucceeded, plan.StepSucceeded, plan.StepStarted, plan.StepPending, plan.StepPending}, states(resumed),
		"the interrupted step was saved as started before its call")
	require.False(t, tickCrashing(t, r.engine, t0.Add(time.Minute)))
	assert.Equal(t, []string{
		"set_node_condition n1", "record_event n1", "cordon_node n1",
		"cordon_node n1", "drain_node n1", "reboot_instance n1",
	}, w.log(), "done steps not repeated; the idempotent interrupted one run again")
	got := get(t, r.store, p.ID)
	assert.Equal(t, plan.Succeeded, got.State)
	assert.Equal(t, 2, got.Steps[2].Attempts)
}

// A reboot found started after a restart may have happened: it is never
// run a second time; the plan stops and escalates instead.
func TestRestartNeverRepeatsANonIdempotentStep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "storage")
	w := &world{}
	fs := fakes(w)
	fs[xid.StepRebootInstance].results = []error{errCrash}
	r := startRun(t, dir, config(), set(fs), nil)
	p := add(t, r.store, newPlan(t, "n1", 79, t0))
	require.True(t, tickCrashing(t, r.engine, t0))
	r.stop(t)

	r = startRun(t, dir, config(), set(fs), nil)
	defer r.stop(t)
	require.False(t, tickCrashing(t, r.engine, t0.Add(time.Minute)))
	assert.Equal(t, 1, w.count("reboot_instance n1"), "the reboot ran once")
	assert.Equal(t, 1, w.count("escalate n1"), "the plan escalated")
	got := get(t, r.store, p.ID)
	assert.Equal(t, plan.Failed, got.State)
	assert.True(t, got.Escalated)
	assert.Equal(t, plan.StepFailed, got.Steps[4].State)
	assert.Contains(t, got.Steps[4].Error, "not run again because it is not idempotent")

	// And a third run does not touch it either.
	r.stop(t)
	r = startRun(t, dir, config(), set(fs), nil)
	require.False(t, tickCrashing(t, r.engine, t0.Add(time.Hour)))
	assert.Equal(t, 1, w.count("reboot_instance n1"))
	assert.Equal(t, 1, w.count("escalate n1"), "a delivered escalation is not sent again")
}

// A failing step is retried with internal/backoff's doubling waits (1s,
// 2s, capped at 4s) up to max_attempts; then the plan fails and escalates,
// and an escalation the webhook refuses is retried with backoff too.
func TestFailingStepRetriesWithBackoffThenStopsAndEscalates(t *testing.T) {
	w := &world{}
	fs := fakes(w)
	boom := errors.New("cordon refused")
	fs[xid.StepCordonNode].results = []error{boom, boom, boom}
	fs[xid.StepEscalate].results = []error{errors.New("webhook down"), errors.New("webhook down")}
	s := plan.NewStore(nil, time.Hour)
	p := add(t, s, newPlan(t, "n1", 79, t0))
	e := New(config(), s, set(fs), nil, nil, nil)
	ctx := context.Background()

	require.NoError(t, e.Tick(ctx, t0))
	got := get(t, s, p.ID)
	assert.Equal(t, plan.Running, got.State)
	assert.Equal(t, plan.StepPending, got.Steps[2].State)
	assert.Equal(t, 1, got.Steps[2].Attempts)
	assert.Equal(t, t0.Add(time.Second), got.Steps[2].NextRetry, "first wait: retry.initial_interval")
	assert.Equal(t, boom.Error(), got.Steps[2].Error)

	require.NoError(t, e.Tick(ctx, t0.Add(999*time.Millisecond)))
	assert.Equal(t, 1, w.count("cordon_node n1"), "not retried before its time")

	require.NoError(t, e.Tick(ctx, t0.Add(time.Second)))
	got = get(t, s, p.ID)
	assert.Equal(t, 2, w.count("cordon_node n1"))
	assert.Equal(t, t0.Add(3*time.Second), got.Steps[2].NextRetry, "second wait doubles")

	require.NoError(t, e.Tick(ctx, t0.Add(2*time.Second)))
	assert.Equal(t, 2, w.count("cordon_node n1"))
	require.NoError(t, e.Tick(ctx, t0.Add(3*time.Second)))
	assert.Equal(t, 3, w.count("cordon_node n1"), "max_attempts reached")
	got = get(t, s, p.ID)
	assert.Equal(t, plan.Failed, got.State)
	assert.Contains(t, got.Reason, "step cordon_node failed: cordon refused")
	assert.Equal(t, plan.StepFailed, got.Steps[2].State)
	assert.Equal(t, []plan.StepState{plan.StepSucceeded, plan.StepSucceeded, plan.StepFailed, plan.StepPending, plan.StepPending}, states(got),
		"the plan stopped: nothing after the failed step ran")
	assert.Zero(t, w.count("drain_node n1"))
	assert.Equal(t, 1, w.count("escalate n1"), "escalated at once")
	assert.False(t, got.Escalated)
	assert.Equal(t, t0.Add(4*time.Second), got.EscalationRetry)

	for _, at := range []time.Duration{3500 * time.Millisecond, 4 * time.Second, 5 * time.Second, 6 * time.Second, time.Minute} {
		require.NoError(t, e.Tick(ctx, t0.Add(at)))
	}
	got = get(t, s, p.ID)
	assert.Equal(t, 3, w.count("escalate n1"), "escalation retried at 4s and 6s, then delivered")
	assert.True(t, got.Escalated)
	assert.Equal(t, 3, w.count("cordon_node n1"), "a failed plan is not run again")
}

// A PodDisruptionBudget blocking an eviction is not a failed attempt: the
// step is retried past max_attempts until eviction_timeout.
func TestBlockedStepWaitsUntilItsTimeout(t *testing.T) {
	w := &world{}
	fs := fakes(w)
	pdb := &executor.Blocked{Err: errors.New("pdb allows no disruption")}
	fs[xid.StepDrainNode].results = slices.Repeat([]error{pdb}, 20)
	s := plan.NewStore(nil, time.Hour)
	p := add(t, s, newPlan(t, "n1", 79, t0))
	cfg := config()
	cfg.BlockedTimeout = 30 * time.Second
	e := New(cfg, s, set(fs), nil, nil, nil)
	ctx := context.Background()
	for at := time.Duration(0); at < 30*time.Second; at += 4 * time.Second {
		require.NoError(t, e.Tick(ctx, t0.Add(at)))
	}
	got := get(t, s, p.ID)
	assert.Equal(t, plan.Running, got.State, "still waiting on the PDB")
	assert.Greater(t, w.count("drain_node n1"), cfg.MaxAttempts, "blocked attempts do not count against max_attempts")
	require.NoError(t, e.Tick(ctx, t0.Add(40*time.Second)))
	got = get(t, s, p.ID)
	assert.Equal(t, plan.Failed, got.State)
	assert.Contains(t, got.Reason, "pdb allows no disruption")
	assert.Zero(t, w.count("reboot_instance n1"))
	assert.Equal(t, 1, w.count("escalate n1"))
}

func TestApprovalCoversTheRemainingSteps(t *testing.T) {
	w := &world{}
	cfg := config()
	cfg.DefaultMode = Approve
	cfg.Modes = map[xid.Step]Mode{xid.StepSetNodeCondition: Automatic, xid.StepRecordEvent: Automatic}
	a := &approvals{}
	s := plan.NewStore(nil, time.Hour)
	p := add(t, s, newPlan(t, "n1", 79, t0))
	e := New(cfg, s, set(fakes(w)), a, nil, nil)
	ctx := context.Background()

	require.NoError(t, e.Tick(ctx, t0))
	got := get(t, s, p.ID)
	assert.Equal(t, plan.AwaitingApproval, got.State)
	assert.Contains(t, got.Reason, "cordon_node waits for approval of plan "+p.ID)
	assert.Equal(t, []string{"set_node_condition n1", "record_event n1"}, w.log(), "the automatic steps ran; the rest wait")

	a.err = errors.New("node unreadable")
	require.NoError(t, e.Tick(ctx, t0.Add(time.Minute)))
	assert.Contains(t, get(t, s, p.ID).Reason, "approvals unreadable: node unreadable")
	a.err = nil

	a.grant(p.ID, "kubectl-annotate", t0.Add(2*time.Minute))
	require.NoError(t, e.Tick(ctx, t0.Add(2*time.Minute)))
	got = get(t, s, p.ID)
	assert.Equal(t, plan.Succeeded, got.State)
	require.NotNil(t, got.Approval)
	assert.Equal(t, "kubectl-annotate", got.Approval.By)
	assert.Len(t, w.log(), 5, "one approval covered cordon, drain and reboot")
}

func TestApprovalExpires(t *testing.T) {
	w := &world{}
	cfg := config()
	cfg.DefaultMode = Approve
	a := &approvals{}
	s := plan.NewStore(nil, 24*time.Hour)
	p := add(t, s, newPlan(t, "n1", 79, t0))
	e := New(cfg, s, set(fakes(w)), a, nil, nil)
	ctx := context.Background()

	require.NoError(t, e.Tick(ctx, t0))
	require.NoError(t, e.Tick(ctx, t0.Add(cfg.ApprovalTTL)))
	assert.Equal(t, plan.AwaitingApproval, get(t, s, p.ID).State, "still within approval_ttl")
	require.NoError(t, e.Tick(ctx, t0.Add(cfg.ApprovalTTL+time.Second)))
	got := get(t, s, p.ID)
	assert.Equal(t, plan.Expired, got.State)
	assert.Equal(t, "not approved within 1h0m0s", got.Reason)

	a.grant(p.ID, "late", t0.Add(2*time.Hour))
	require.NoError(t, e.Tick(ctx, t0.Add(2*time.Hour)))
	assert.Equal(t, plan.Expired, get(t, s, p.ID).State, "a late approval does not revive it")
	assert.Empty(t, w.log(), "nothing ran")
}

// Ten nodes fail at once with max_nodes 2: two plans act, the other
// eight wait with the rail named, in the order the failures came; the
// cooldown keeps a finished node counted.
func TestGuardRailsHoldPlansBeyondTheLimits(t *testing.T) {
	w := &world{}
	cfg := config()
	cfg.Guard.MaxNodes = 2
	cfg.Guard.NodeCooldown = time.Hour
	s := plan.NewStore(nil, 24*time.Hour)
	var ids []string
	for i := range 10 {
		ids = append(ids, add(t, s, newPlan(t, fmt.Sprintf("n%d", i), 79, t0.Add(time.Duration(i)*time.Second))).ID)
	}
	e := New(cfg, s, set(fakes(w)), nil, nil, nil)
	ctx := context.Background()
	require.NoError(t, e.Tick(ctx, t0.Add(time.Minute)))
	for i, id := range ids {
		got := get(t, s, id)
		if i < 2 {
			assert.Equal(t, plan.Succeeded, got.State, "plan %d", i)
			continue
		}
		assert.Equal(t, plan.Waiting, got.State, "plan %d", i)
		assert.Equal(t, "max_nodes: 2 nodes under remediation (limit 2)", got.Reason)
		assert.Equal(t, []plan.StepState{plan.StepSucceeded, plan.StepSucceeded, plan.StepPending, plan.StepPending, plan.StepPending}, states(got),
			"telling steps are not limited by the rails")
	}
	assert.Equal(t, 1, w.count("cordon_node n0"))
	assert.Equal(t, 1, w.count("cordon_node n1"))
	assert.Zero(t, w.count("cordon_node n2"))

	// Still cooling down: the finished nodes still count.
	require.NoError(t, e.Tick(ctx, t0.Add(30*time.Minute)))
	assert.Equal(t, plan.Waiting, get(t, s, ids[2]).State)
	// Cooldown over: the next two, in order.
	require.NoError(t, e.Tick(ctx, t0.Add(62*time.Minute)))
	assert.Equal(t, plan.Succeeded, get(t, s, ids[2]).State)
	assert.Equal(t, plan.Succeeded, get(t, s, ids[3]).State)
	assert.Equal(t, plan.Waiting, get(t, s, ids[4]).State)
}

func TestActionsPerHourAndMaintenanceWindowsHoldSteps(t *testing.T) {
	w := &world{}
	cfg := config()
	cfg.Guard.ActionsPerHour = 2
	// Open daily 12:00-13:00 UTC; t0 is 10:00.
	cfg.Guard.MaintenanceWindows = []guard.Window{{Start: "12:00", Duration: time.Hour}}
	s := plan.NewStore(nil, 24*time.Hour)
	p := add(t, s, newPlan(t, "n1", 79, t0))
	e := New(cfg, s, set(fakes(w)), nil, nil, nil)
	ctx := context.Background()

	require.NoError(t, e.Tick(ctx, t0))
	got := get(t, s, p.ID)
	assert.Equal(t, plan.Waiting, got.State)
	assert.Equal(t, "maintenance_windows: outside every maintenance window", got.Reason)
	assert.Equal(t, []string{"set_node_condition n1", "record_event n1"}, w.log())

	require.NoError(t, e.Tick(ctx, t0.Add(2*time.Hour)))
	got = get(t, s, p.ID)
	assert.Equal(t, plan.Waiting, got.State)
	assert.Equal(t, "actions_per_hour: 2 disruptive steps in the last hour (limit 2)", got.Reason)
	assert.Equal(t, 1, w.count("cordon_node n1"))
	assert.Equal(t, 1, w.count("drain_node n1"))
	assert.Zero(t, w.count("reboot_instance n1"))

	require.NoError(t, e.Tick(ctx, t0.Add(3*time.Hour+time.Second)))
	assert.Equal(t, plan.Waiting, get(t, s, p.ID).State, "the hour's budget is free again, but the window closed at 13:00")
	require.NoError(t, e.Tick(ctx, t0.Add(26*time.Hour)))
	assert.Equal(t, plan.Succeeded, get(t, s, p.ID).State, "the next day's window")
	assert.Equal(t, 1, w.count("reboot_instance n1"))
}

func TestDryRunReachesTheExecutorsAndIsRecorded(t *testing.T) {
	w := &world{}
	cfg := config()
	cfg.DryRun = true
	s := plan.NewStore(nil, time.Hour)
	p := add(t, s, newPlan(t, "n1", 54, t0)) // condition, event, cordon, escalate
	require.NoError(t, New(cfg, s, set(fakes(w)), nil, nil, nil).Tick(context.Background(), t0))
	assert.Equal(t, []string{"set_node_condition n1 dry-run", "record_event n1 dry-run", "cordon_node n1 dry-run", "escalate n1 dry-run"}, w.log())
	for _, st := range get(t, s, p.ID).Steps {
		assert.True(t, st.DryRun, st.Kind)
	}
}
