// Package ratelimit keeps warnings about things that repeat (a malformed
// line on every scrape, an unreachable endpoint) from flooding the log: one
// message per key per period, with the count of what was held back.
package ratelimit

import (
	"sync"
	"time"
)

// Limiter allows one event per key per period.
type Limiter struct {
	period time.Duration
	now    func() time.Time

	mu         sync.Mutex
	last       map[string]time.Time
	suppressed map[string]int
}

// New returns a limiter that lets one event per key through every period.
func New(period time.Duration) *Limiter {
	return &Limiter{period: period, now: time.Now, last: map[string]time.Time{}, suppressed: map[string]int{}}
}

// WithClock replaces the clock (tests).
func (l *Limiter) WithClock(now func() time.Time) *Limiter {
	l.now = now
	return l
}

// Allow reports whether an event for key may be logged now and, if so, how
// many were held back since the last one that was.
func (l *Limiter) Allow(key string) (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if last, seen := l.last[key]; seen && now.Sub(last) < l.period {
		l.suppressed[key]++
		return false, 0
	}
	l.last[key] = now
	suppressed = l.suppressed[key]
	delete(l.suppressed, key)
	return true, suppressed
}

// Reset forgets key, so that the next event for it is logged at once (used
// when a condition clears and may come back).
func (l *Limiter) Reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, key)
	delete(l.suppressed, key)
}
