package firstrequest

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRegistry(t *testing.T) {
	r := New()
	assert.False(t, r.HasProducer())
	remove := r.AddProducer()
	assert.True(t, r.HasProducer())
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	r.Observe("a", t0.Add(time.Minute))
	r.Observe("a", t0) // earlier wins
	r.Observe("a", t0.Add(time.Hour))
	got, ok := r.First("a")
	assert.True(t, ok)
	assert.Equal(t, t0, got)
	_, ok = r.First("b")
	assert.False(t, ok)
	remove()
	remove()
	assert.False(t, r.HasProducer(), "remove is idempotent")
	for i := 0; i < maxPods+1; i++ {
		r.Observe("p"+strconv.Itoa(i), t0)
	}
	_, ok = r.First("a")
	assert.False(t, ok, "the oldest is forgotten past the bound")
	_, ok = r.First("p" + strconv.Itoa(maxPods))
	assert.True(t, ok)
}
