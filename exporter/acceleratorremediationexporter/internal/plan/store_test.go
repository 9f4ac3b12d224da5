package plan

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func newPlan(t *testing.T, node string, code int, at time.Time) *Plan {
	t.Helper()
	rp, ok := xid.PlanFor(xid.Lookup(code))
	require.True(t, ok)
	return New(rp, Subject{Node: node, DeviceID: "GPU-1"}, Evidence{XID: code}, at)
}

func TestStoreKeepsCopiesAndOpenPlans(t *testing.T) {
	ctx := context.Background()
	s := NewStore(nil, time.Hour)
	p := newPlan(t, "n1", 48, t0)
	require.NoError(t, s.Save(ctx, p))
	p.Steps[0].State = StepSucceeded // not saved: the store's copy is unchanged
	got, ok := s.Get(p.ID)
	require.True(t, ok)
	assert.Equal(t, StepPending, got.Steps[0].State)

	open, ok := s.Open(p.Key())
	require.True(t, ok)
	assert.Equal(t, p.ID, open.ID)
	// The same device's node-wide plan has another key.
	_, ok = s.Open(newPlan(t, "n1", 79, t0).Key())
	assert.False(t, ok)

	later := newPlan(t, "n2", 48, t0.Add(time.Second))
	require.NoError(t, s.Save(ctx, later))
	all := s.All()
	require.Len(t, all, 2)
	assert.Equal(t, p.ID, all[0].ID, "oldest first")
}

func TestPruneForgetsOnlyOldFinishedPlans(t *testing.T) {
	ctx := context.Background()
	s := NewStore(nil, time.Hour)
	done := newPlan(t, "n1", 48, t0)
	done.Set(Succeeded, "", t0)
	open := newPlan(t, "n2", 48, t0)
	require.NoError(t, s.Save(ctx, done))
	require.NoError(t, s.Save(ctx, open))
	require.NoError(t, s.Prune(ctx, t0.Add(30*time.Minute)))
	assert.Len(t, s.All(), 2)
	require.NoError(t, s.Prune(ctx, t0.Add(2*time.Hour)))
	all := s.All()
	require.Len(t, all, 1)
	assert.Equal(t, open.ID, all[0].ID, "an open plan is kept however old")
}

func TestNextAndIDs(t *testing.T) {
	p := newPlan(t, "n1", 48, t0)
	assert.Equal(t, 0, p.Next())
	p.Steps[0].State = StepSucceeded
	p.Steps[1].State = StepStarted
	assert.Equal(t, 1, p.Next(), "a started step is not finished")
	for i := range p.Steps {
		p.Steps[i].State = StepSkipped
	}
	assert.Equal(t, -1, p.Next())
	assert.Regexp(t, `^rp-[0-9a-f]{10}$`, p.ID)
	assert.NotEqual(t, p.ID, newPlan(t, "n1", 48, t0.Add(time.Nanosecond)).ID)
}
