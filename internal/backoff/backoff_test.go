package backoff

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDoublesUpToMaxAndResets(t *testing.T) {
	b := New(time.Second, 5*time.Second)
	now := time.Unix(1000, 0)
	assert.True(t, b.Ready(now))
	var waits []time.Duration
	for range 5 {
		waits = append(waits, b.Failed(now))
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}, waits)
	assert.True(t, b.Failing())
	assert.False(t, b.Ready(now.Add(4*time.Second)))
	assert.True(t, b.Ready(now.Add(5*time.Second)))
	b.Succeeded()
	assert.False(t, b.Failing())
	assert.True(t, b.Ready(now))
	assert.Equal(t, time.Second, b.Failed(now), "starts over")
}
