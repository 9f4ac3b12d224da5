package ratelimit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestOnePerKeyPerPeriod(t *testing.T) {
	now := time.Unix(0, 0)
	l := New(time.Minute).WithClock(func() time.Time { return now })
	ok, held := l.Allow("a")
	assert.True(t, ok)
	assert.Zero(t, held)
	for range 3 {
		ok, _ = l.Allow("a")
		assert.False(t, ok)
	}
	ok, _ = l.Allow("b")
	assert.True(t, ok, "keys are independent")

	now = now.Add(time.Minute)
	ok, held = l.Allow("a")
	assert.True(t, ok)
	assert.Equal(t, 3, held, "says how many were held back")

	l.Reset("a")
	ok, _ = l.Allow("a")
	assert.True(t, ok, "a condition that cleared is reported at once when it returns")
}
