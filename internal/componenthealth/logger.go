package componenthealth

import (
	"fmt"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Logger logs a message at most once per interval per key, so that a broken
// input seen on every batch makes one line every few minutes instead of
// thousands. The line that ends a quiet period says how many were held back:
// "… (12 similar messages suppressed in the last 1m0s)".
type Logger struct {
	log   *zap.Logger
	limit *Limiter
}

// NewLogger returns a Logger that lets one message per key through per
// interval.
func NewLogger(log *zap.Logger, interval time.Duration) *Logger {
	return &Logger{log: log, limit: NewLimiter(interval)}
}

// SetClock replaces the clock (tests, and components with their own).
func (l *Logger) SetClock(now func() time.Time) { l.limit.SetClock(now) }

// Debug logs msg under key at debug level unless key logged less than an
// interval ago.
func (l *Logger) Debug(key, msg string, fields ...zap.Field) {
	l.emit(zap.DebugLevel, key, msg, fields)
}

// Info is Debug at info level.
func (l *Logger) Info(key, msg string, fields ...zap.Field) { l.emit(zap.InfoLevel, key, msg, fields) }

// Warn is Debug at warn level.
func (l *Logger) Warn(key, msg string, fields ...zap.Field) { l.emit(zap.WarnLevel, key, msg, fields) }

// Error is Debug at error level.
func (l *Logger) Error(key, msg string, fields ...zap.Field) {
	l.emit(zap.ErrorLevel, key, msg, fields)
}

// Reset forgets key, so that the next message under it is logged at once
// (the condition it reported cleared, or changed).
func (l *Logger) Reset(key string) { l.limit.Reset(key) }

// ResetPrefix forgets every key that starts with prefix.
func (l *Logger) ResetPrefix(prefix string) { l.limit.ResetPrefix(prefix) }

func (l *Logger) emit(level zapcore.Level, key, msg string, fields []zap.Field) {
	// A level that is off neither logs nor counts: the first line after it
	// is switched on is not blamed for lines nobody would have seen.
	if !l.log.Core().Enabled(level) {
		return
	}
	ok, held, over := l.limit.take(key)
	if !ok {
		return
	}
	if held > 0 {
		msg += suppressedSuffix(held, over)
	}
	if ce := l.log.Check(level, msg); ce != nil {
		ce.Write(fields...)
	}
}

func suppressedSuffix(held int, over time.Duration) string {
	if over >= time.Second {
		over = over.Round(time.Second)
	}
	noun := "messages"
	if held == 1 {
		noun = "message"
	}
	return fmt.Sprintf(" (%d similar %s suppressed in the last %s)", held, noun, over)
}
