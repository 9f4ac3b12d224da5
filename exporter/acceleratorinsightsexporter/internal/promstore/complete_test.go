package promstore

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A round with fewer than half of the last complete round's devices is
// incomplete until the drop has lasted dropBelievedAfter (a cluster really
// removed); a smaller drop, or growth, is the fleet at once.
func TestCompletenessBelievesALastingDropOnly(t *testing.T) {
	var c completeness
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	require.NoError(t, c.check(0, t0), "nothing yet is not a drop")
	require.NoError(t, c.check(56, t0))
	require.NoError(t, c.check(30, t0.Add(time.Second)), "30 of 56: a few nodes gone")
	err := c.check(0, t0.Add(2*time.Second))
	require.True(t, errors.Is(err, ErrIncomplete), "%v", err)
	require.ErrorContains(t, err, "0 devices have hw.status, the last complete answer had 30")
	require.Error(t, c.check(10, t0.Add(30*time.Second)))
	require.NoError(t, c.check(30, t0.Add(31*time.Second)), "the fleet is back")
	require.Error(t, c.check(14, t0.Add(32*time.Second)), "a new drop starts its own wait")
	require.Error(t, c.check(14, t0.Add(32*time.Second+dropBelievedAfter-time.Second)))
	require.NoError(t, c.check(14, t0.Add(32*time.Second+dropBelievedAfter)), "a drop that lasts is believed")
	require.NoError(t, c.check(10, t0.Add(33*time.Second+dropBelievedAfter)), "and is the new reference")
}
