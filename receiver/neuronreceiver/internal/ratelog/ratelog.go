// Package ratelog keeps a noisy source from flooding the collector's log.
//
// neuron-monitor can repeat the same complaint every period for hours (a
// group it cannot collect in a container, a stderr warning), and a broken
// stream can produce one error per line. Each kind of message, named by a
// key, is logged at most once per interval; the next one that gets through
// says how many were held back.
package ratelog

import (
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// maxKeys bounds memory if keys ever carry unbounded values.
const maxKeys = 1024

// Logger wraps a zap.Logger with per-key rate limiting. It is safe for
// concurrent use.
type Logger struct {
	log   *zap.Logger
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex
	keys map[string]*state
}

type state struct {
	last       time.Time
	suppressed int
}

// New returns a Logger that lets each key through at most once per every.
func New(log *zap.Logger, every time.Duration) *Logger {
	return &Logger{log: log, every: every, now: time.Now, keys: map[string]*state{}}
}

// WithClock replaces the clock, for tests.
func (l *Logger) WithClock(now func() time.Time) *Logger {
	l.now = now
	return l
}

// Warn logs at warn level, rate-limited by key.
func (l *Logger) Warn(key, msg string, fields ...zap.Field) {
	l.write(zapcore.WarnLevel, key, msg, fields)
}

// Error logs at error level, rate-limited by key.
func (l *Logger) Error(key, msg string, fields ...zap.Field) {
	l.write(zapcore.ErrorLevel, key, msg, fields)
}

// Info logs at info level, rate-limited by key.
func (l *Logger) Info(key, msg string, fields ...zap.Field) {
	l.write(zapcore.InfoLevel, key, msg, fields)
}

// Forget lets the next message with key through at once, for a condition
// that was resolved and may come back.
func (l *Logger) Forget(key string) {
	l.mu.Lock()
	delete(l.keys, key)
	l.mu.Unlock()
}

func (l *Logger) write(level zapcore.Level, key, msg string, fields []zap.Field) {
	if ce := l.log.Check(level, msg); ce == nil {
		return
	}
	now := l.now()
	l.mu.Lock()
	st := l.keys[key]
	if st == nil {
		if len(l.keys) >= maxKeys {
			clear(l.keys)
		}
		st = &state{}
		l.keys[key] = st
	} else if now.Sub(st.last) < l.every {
		st.suppressed++
		l.mu.Unlock()
		return
	}
	suppressed := st.suppressed
	st.last, st.suppressed = now, 0
	l.mu.Unlock()
	if suppressed > 0 {
		fields = append(fields, zap.Int("suppressed_since_last", suppressed))
	}
	if ce := l.log.Check(level, msg); ce != nil {
		ce.Write(fields...)
	}
}
