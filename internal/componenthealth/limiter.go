package componenthealth

import (
	"strings"
	"sync"
	"time"
)

// maxKeys bounds a Limiter's memory when keys are built from outside input
// (a pod, a pid, a metric name): past it, keys not used for an interval are
// dropped, then the least recently used one.
const maxKeys = 1024

// Limiter lets one event per key through per interval and counts the ones
// it holds back. It is safe for concurrent use.
type Limiter struct {
	interval time.Duration
	now      func() time.Time

	mu   sync.Mutex
	keys map[string]*limit
}

type limit struct {
	allowed time.Time // when an event last went through
	seen    time.Time // when an event last came, through or not
	held    int       // events held back since allowed
}

// NewLimiter returns a Limiter that lets one event per key through per
// interval.
func NewLimiter(interval time.Duration) *Limiter {
	return &Limiter{interval: interval, now: time.Now, keys: map[string]*limit{}}
}

// SetClock replaces the clock (tests, and components with their own).
func (l *Limiter) SetClock(now func() time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.now = now
}

// Allow reports whether an event under key may happen now.
func (l *Limiter) Allow(key string) bool {
	ok, _, _ := l.take(key)
	return ok
}

// take is Allow that also says, when the event goes through, how many were
// held back and over how long.
func (l *Limiter) take(key string) (ok bool, held int, over time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	k, found := l.keys[key]
	if !found {
		if len(l.keys) >= maxKeys {
			l.makeRoom(now)
		}
		l.keys[key] = &limit{allowed: now, seen: now}
		return true, 0, 0
	}
	k.seen = now
	if now.Sub(k.allowed) < l.interval {
		k.held++
		return false, 0, 0
	}
	held, over = k.held, now.Sub(k.allowed)
	k.allowed, k.held = now, 0
	return true, held, over
}

// makeRoom drops the keys that saw nothing for an interval (what they held
// back belongs to a burst that is over) and, if none did, the one idle
// longest.
func (l *Limiter) makeRoom(now time.Time) {
	var oldestKey string
	var oldest time.Time
	for key, k := range l.keys {
		if now.Sub(k.seen) >= l.interval {
			delete(l.keys, key)
			continue
		}
		if oldestKey == "" || k.seen.Before(oldest) {
			oldestKey, oldest = key, k.seen
		}
	}
	if len(l.keys) >= maxKeys {
		delete(l.keys, oldestKey)
	}
}

// Reset forgets key, so that its next event goes through at once (the
// condition it was about cleared, or changed).
func (l *Limiter) Reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.keys, key)
}

// ResetPrefix forgets every key that starts with prefix (everything about
// a target that went away).
func (l *Limiter) ResetPrefix(prefix string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key := range l.keys {
		if strings.HasPrefix(key, prefix) {
			delete(l.keys, key)
		}
	}
}

// Len is the number of keys remembered (tests).
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}
