package componenthealth

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestLoggerSaysHowManyItHeldBack(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	c := &clock{now: time.Unix(0, 0)}
	l := NewLogger(zap.New(core), time.Minute)
	l.SetClock(c.Now)

	for range 13 {
		l.Warn("socket", "socket missing", zap.String("path", "/var/lib/kubelet"))
		c.Add(time.Second)
	}
	l.Warn("rbac", "forbidden")
	c.Add(47 * time.Second) // 60 s after the first line
	l.Warn("socket", "socket missing", zap.String("path", "/var/lib/kubelet"))
	c.Add(time.Minute)
	l.Warn("socket", "socket missing")
	c.Add(time.Minute)
	l.Warn("socket", "socket missing")

	var got []string
	for _, e := range logs.All() {
		got = append(got, e.Message)
	}
	assert.Equal(t, []string{
		"socket missing",
		"forbidden",
		"socket missing (12 similar messages suppressed in the last 1m0s)",
		"socket missing", // nothing was held back
		"socket missing",
	}, got)
	assert.Equal(t, "/var/lib/kubelet", logs.All()[2].ContextMap()["path"], "the caller's fields are kept")
}

func TestLoggerSingularAndOddDurations(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	c := &clock{now: time.Unix(0, 0)}
	l := NewLogger(zap.New(core), 10*time.Minute)
	l.SetClock(c.Now)
	l.Error("k", "exporter down")
	c.Add(time.Minute)
	l.Error("k", "exporter down")
	c.Add(46*time.Minute + 400*time.Millisecond)
	l.Error("k", "exporter down")
	require.Equal(t, 2, logs.Len())
	assert.Equal(t, "exporter down (1 similar message suppressed in the last 47m0s)", logs.All()[1].Message)
}

func TestResetLogsAtOnce(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	l := NewLogger(zap.New(core), time.Hour)
	l.Warn("problem/kubelet", "kubelet unavailable")
	l.Warn("problem/kubelet", "kubelet unavailable")
	l.Reset("problem/kubelet")
	l.Warn("problem/kubelet", "kubelet unavailable: permission denied")
	l.Info("pod-a\x00input", "skipped")
	l.Info("pod-a\x00discovery", "unusable")
	l.Info("pod-b\x00input", "skipped")
	l.ResetPrefix("pod-a\x00")
	l.Info("pod-a\x00input", "skipped")
	l.Info("pod-b\x00input", "skipped")
	assert.Equal(t, 6, logs.Len())
	assert.Equal(t, "kubelet unavailable: permission denied", logs.All()[1].Message, "a reset key reports nothing held back")
}

func TestDisabledLevelsNeitherLogNorCount(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	l := NewLogger(zap.New(core), time.Hour)
	for range 5 {
		l.Debug("dbg", "m")
	}
	assert.Zero(t, logs.Len())
	assert.Zero(t, l.limit.Len())
}

func TestLimiterKeysAreBounded(t *testing.T) {
	c := &clock{now: time.Unix(0, 0)}
	l := NewLimiter(time.Minute)
	l.SetClock(c.Now)
	l.Allow("busy")
	for i := range maxKeys + 10 {
		l.Allow("busy") // seen every time: the last to go
		assert.True(t, l.Allow(fmt.Sprint("pid-", i)), "new keys always go through")
		if i == maxKeys/2 {
			c.Add(time.Minute) // the first half goes idle
		}
	}
	assert.LessOrEqual(t, l.Len(), maxKeys)
	assert.False(t, l.Allow("busy"), "a key in use survives making room")
}

func TestLimiterIsAGateForAnything(t *testing.T) {
	c := &clock{now: time.Unix(0, 0)}
	l := NewLimiter(time.Minute)
	l.SetClock(c.Now)
	assert.True(t, l.Allow("gpu-0"))
	assert.False(t, l.Allow("gpu-0"))
	assert.True(t, l.Allow("gpu-1"))
	c.Add(time.Minute)
	assert.True(t, l.Allow("gpu-0"))
}
