package ratelog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestOneLinePerKeyPerInterval(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	r := New(zap.New(core), time.Minute)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return now }

	for i := 0; i < 100; i++ {
		r.Warn("bad-point:hw.power", "bad point")
	}
	r.Error("endpoint", "unreachable")
	assert.Equal(t, 2, logs.Len())

	now = now.Add(61 * time.Second)
	r.Warn("bad-point:hw.power", "bad point")
	all := logs.All()
	assert.Equal(t, 3, len(all))
	assert.Equal(t, int64(99), all[2].ContextMap()["suppressed_since_last_log"])

	r.Reset("endpoint")
	r.Error("endpoint", "unreachable")
	assert.Equal(t, 4, logs.Len())
}
