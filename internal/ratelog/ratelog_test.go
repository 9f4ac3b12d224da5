package ratelog

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestOneMessagePerIntervalPerKey(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	now := time.Unix(0, 0)
	l := New(zap.New(core), time.Minute)
	l.SetClock(func() time.Time { return now })

	for range 5 {
		l.Warn("socket", "socket missing")
	}
	l.Warn("rbac", "forbidden")
	assert.Equal(t, 2, logs.Len())

	now = now.Add(time.Minute)
	l.Warn("socket", "socket missing")
	entries := logs.All()
	assert.Equal(t, 3, len(entries))
	assert.Equal(t, int64(4), entries[2].ContextMap()["suppressed_since_last"])

	l.Reset("socket")
	l.Error("socket", "socket missing again")
	assert.Equal(t, 4, logs.Len())
}

func TestKeysAreBounded(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	l := New(zap.New(core), time.Hour)
	for i := range maxKeys + 10 {
		l.Info(fmt.Sprint("k", i), "m")
	}
	assert.Equal(t, maxKeys+10, logs.Len())
	assert.LessOrEqual(t, len(l.keys), maxKeys)
	// Disabled levels cost nothing and record nothing.
	l.Debug("dbg", "m")
	assert.NotContains(t, l.keys, "dbg")
}
