// Package ratelog logs a message at most once per interval per key, and says
// how many were held back, so that a broken input seen on every batch makes
// one line every few minutes instead of thousands.
package ratelog

import (
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Logger wraps a zap.Logger.
type Logger struct {
	log      *zap.Logger
	interval time.Duration
	now      func() time.Time

	mu   sync.Mutex
	keys map[string]*state
}

type state struct {
	last       time.Time
	suppressed int
}

// maxKeys bounds memory when keys are built from outside input (a pod name,
// a pid): past it, the oldest keys are forgotten.
const maxKeys = 1024

// New returns a Logger that lets one message per key through per interval.
func New(log *zap.Logger, interval time.Duration) *Logger {
	return &Logger{log: log, interval: interval, now: time.Now, keys: map[string]*state{}}
}

// SetClock replaces the clock (tests).
func (l *Logger) SetClock(now func() time.Time) { l.now = now }

// Warn logs msg under key unless the key logged less than an interval ago.
func (l *Logger) Warn(key, msg string, fields ...zap.Field) { l.emit(zap.WarnLevel, key, msg, fields) }

// Error is Warn at error level.
func (l *Logger) Error(key, msg string, fields ...zap.Field) {
	l.emit(zap.ErrorLevel, key, msg, fields)
}

// Info is Warn at info level.
func (l *Logger) Info(key, msg string, fields ...zap.Field) { l.emit(zap.InfoLevel, key, msg, fields) }

// Debug is Warn at debug level.
func (l *Logger) Debug(key, msg string, fields ...zap.Field) {
	l.emit(zap.DebugLevel, key, msg, fields)
}

// Reset forgets key, so that the next message under it is logged at once
// (after the condition it reported has cleared).
func (l *Logger) Reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.keys, key)
}

func (l *Logger) emit(level zapcore.Level, key, msg string, fields []zap.Field) {
	if !l.log.Core().Enabled(level) {
		return
	}
	now := l.now()
	l.mu.Lock()
	st, ok := l.keys[key]
	if ok && now.Sub(st.last) < l.interval {
		st.suppressed++
		l.mu.Unlock()
		return
	}
	suppressed := 0
	if ok {
		suppressed = st.suppressed
		st.last, st.suppressed = now, 0
	} else {
		if len(l.keys) >= maxKeys {
			l.evictOldest()
		}
		l.keys[key] = &state{last: now}
	}
	l.mu.Unlock()
	if suppressed > 0 {
		fields = append(fields, zap.Int("suppressed_since_last", suppressed))
	}
	if ce := l.log.Check(level, msg); ce != nil {
		ce.Write(fields...)
	}
}

func (l *Logger) evictOldest() {
	var oldestKey string
	var oldest time.Time
	for k, st := range l.keys {
		if oldestKey == "" || st.last.Before(oldest) {
			oldestKey, oldest = k, st.last
		}
	}
	delete(l.keys, oldestKey)
}
