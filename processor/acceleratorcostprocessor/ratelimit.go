package acceleratorcostprocessor

import (
	"sync"
	"time"
)

// rateLimiter lets one log line per key through per period, so a resource
// without a price or a broken pricing file is reported clearly without
// flooding the log every scrape.
type rateLimiter struct {
	mu     sync.Mutex
	period time.Duration
	now    func() time.Time
	last   map[string]time.Time
}

// maxLimiterKeys bounds the limiter's memory; past it, old keys are dropped
// (at worst a line is logged again early).
const maxLimiterKeys = 1024

func newRateLimiter(period time.Duration, now func() time.Time) *rateLimiter {
	return &rateLimiter{period: period, now: now, last: map[string]time.Time{}}
}

func (r *rateLimiter) allow(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if t, ok := r.last[key]; ok && now.Sub(t) < r.period {
		return false
	}
	if len(r.last) >= maxLimiterKeys {
		for k, t := range r.last {
			if now.Sub(t) >= r.period {
				delete(r.last, k)
			}
		}
		if len(r.last) >= maxLimiterKeys {
			r.last = map[string]time.Time{}
		}
	}
	r.last[key] = now
	return true
}
