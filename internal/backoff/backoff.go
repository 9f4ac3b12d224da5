// Package backoff spaces out retries of something that is missing (the
// NVIDIA driver library, a /metrics endpoint that does not answer): the
// first retry comes soon, later ones less often, up to a ceiling, and
// success resets it.
package backoff // import "github.com/otelcol-accel/otelcol-accel/internal/backoff"

import "time"

// Backoff is not safe for concurrent use; its owner serializes calls.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration

	current time.Duration
	next    time.Time
}

// New returns a backoff starting at initial and doubling up to maxWait.
func New(initial, maxWait time.Duration) *Backoff {
	return &Backoff{Initial: initial, Max: maxWait}
}

// Ready reports whether an attempt may be made at now.
func (b *Backoff) Ready(now time.Time) bool { return !now.Before(b.next) }

// Failed records a failed attempt at now and returns the wait before the
// next one.
func (b *Backoff) Failed(now time.Time) time.Duration {
	switch b.current {
	case 0:
		b.current = b.Initial
	default:
		b.current *= 2
	}
	if b.current > b.Max {
		b.current = b.Max
	}
	b.next = now.Add(b.current)
	return b.current
}

// Succeeded resets the backoff.
func (b *Backoff) Succeeded() {
	b.current = 0
	b.next = time.Time{}
}

// Failing reports whether the last attempt failed.
func (b *Backoff) Failing() bool { return b.current != 0 }
