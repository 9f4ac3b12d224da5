package remediationplans

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
)

type source struct {
	plans    []Plan
	approved map[string]string
}

func (s *source) Plans() []Plan { return s.plans }

func (s *source) Approve(_ context.Context, planID, who string) error {
	for _, p := range s.plans {
		if p.ID != planID {
			continue
		}
		if !p.AwaitingApproval() {
			return ErrNotAwaiting
		}
		s.approved[planID] = who
		return nil
	}
	return ErrUnknownPlan
}

func TestRegistry(t *testing.T) {
	a := component.MustNewIDWithName("accelerator_remediation", "a")
	b := component.MustNewID("accelerator_remediation")
	sa := &source{plans: []Plan{{ID: "rp-1", State: "awaiting_approval"}, {ID: "rp-2", State: "running"}}, approved: map[string]string{}}
	sb := &source{approved: map[string]string{}}

	unA := Register(a, sa)
	unB := Register(b, sb)
	assert.Equal(t, []component.ID{b, a}, IDs())

	got, ok := Lookup(a)
	require.True(t, ok)
	assert.Len(t, got.Plans(), 2)

	require.NoError(t, Approve(context.Background(), a, "rp-1", "alice"))
	assert.Equal(t, "alice", sa.approved["rp-1"])
	assert.ErrorIs(t, Approve(context.Background(), a, "rp-2", "alice"), ErrNotAwaiting)
	assert.ErrorIs(t, Approve(context.Background(), a, "rp-9", "alice"), ErrUnknownPlan)
	assert.ErrorIs(t, Approve(context.Background(), a, "rp-1", ""), ErrNoApprover)

	// A replacement survives the earlier registration's unregister.
	sa2 := &source{approved: map[string]string{}}
	unA2 := Register(a, sa2)
	unA()
	got, ok = Lookup(a)
	require.True(t, ok)
	assert.Same(t, sa2, got)

	unA2()
	unB()
	assert.Empty(t, IDs())
	assert.True(t, errors.Is(Approve(context.Background(), a, "rp-1", "alice"), ErrUnknownSource))
}
