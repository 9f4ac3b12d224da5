package ratelog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestOncePerIntervalPerKey(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(zap.New(core), time.Minute).WithClock(func() time.Time { return now })

	for range 5 {
		l.Warn("a", "stderr line")
	}
	l.Error("b", "other problem")
	require.Equal(t, 2, logs.Len(), "one per key")

	now = now.Add(61 * time.Second)
	l.Warn("a", "stderr line", zap.String("line", "x"))
	require.Equal(t, 3, logs.Len())
	last := logs.All()[2]
	assert.Equal(t, int64(4), last.ContextMap()["suppressed_since_last"])
	assert.Equal(t, "x", last.ContextMap()["line"])

	l.Forget("a")
	l.Warn("a", "stderr line")
	assert.Equal(t, 4, logs.Len(), "a forgotten key gets through at once")
}

func TestDisabledLevelCostsNothing(t *testing.T) {
	core, logs := observer.New(zapcore.ErrorLevel)
	l := New(zap.New(core), time.Minute)
	l.Info("a", "x")
	l.Error("a", "y")
	assert.Equal(t, 1, logs.Len(), "an info message below the level does not use up the key")
}
