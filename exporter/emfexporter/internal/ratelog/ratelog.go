// Package ratelog logs repeated problems at most once per interval per key,
// with a count of what was suppressed in between, so that a stream of bad
// input or an unreachable endpoint yields one clear line a minute instead of
// one per point.
package ratelog

import (
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// maxKeys bounds the memory held for keys; past it the table starts over.
const maxKeys = 1024

// Logger wraps a zap logger.
type Logger struct {
	l     *zap.Logger
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex
	keys map[string]*entry
}

type entry struct {
	last       time.Time
	suppressed int
}

// New returns a Logger that lets one line per key through every interval.
func New(l *zap.Logger, every time.Duration) *Logger {
	return &Logger{l: l, every: every, now: time.Now, keys: map[string]*entry{}}
}

// Warn logs at warning level, rate-limited by key.
func (r *Logger) Warn(key, msg string, fields ...zap.Field) {
	r.log(zapcore.WarnLevel, key, msg, fields)
}

// Error logs at error level, rate-limited by key.
func (r *Logger) Error(key, msg string, fields ...zap.Field) {
	r.log(zapcore.ErrorLevel, key, msg, fields)
}

// Reset forgets key, so the next problem under it is logged at once (used
// when a condition clears, e.g. the endpoint answers again).
func (r *Logger) Reset(key string) {
	r.mu.Lock()
	delete(r.keys, key)
	r.mu.Unlock()
}

func (r *Logger) log(level zapcore.Level, key, msg string, fields []zap.Field) {
	now := r.now()
	r.mu.Lock()
	e, ok := r.keys[key]
	if !ok {
		if len(r.keys) >= maxKeys {
			r.keys = map[string]*entry{}
		}
		e = &entry{}
		r.keys[key] = e
	}
	if ok && now.Sub(e.last) < r.every {
		e.suppressed++
		r.mu.Unlock()
		return
	}
	suppressed := e.suppressed
	e.last, e.suppressed = now, 0
	r.mu.Unlock()
	if suppressed > 0 {
		fields = append(fields, zap.Int("suppressed_since_last_log", suppressed))
	}
	if ce := r.l.Check(level, msg); ce != nil {
		ce.Write(fields...)
	}
}
