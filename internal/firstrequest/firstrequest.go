// Package firstrequest carries, within one collector process, when each
// inference pod served its first request: the inference receiver, which
// scrapes the server, records it; the accelerator_k8s receiver, which
// measures the pod's cold start, reads it as the last phase. Nothing
// leaves the process.
package firstrequest // import "github.com/otelcol-accel/otelcol-accel/internal/firstrequest"

import (
	"sync"
	"time"
)

// maxPods bounds the registry: the oldest pods are forgotten first.
const maxPods = 4096

// Registry maps a pod UID to when its first completed request was seen.
type Registry struct {
	mu        sync.Mutex
	first     map[string]time.Time
	order     []string
	producers int
}

// New returns an empty registry (tests); components use Shared.
func New() *Registry { return &Registry{first: map[string]time.Time{}} }

var process = New()

// Shared is the registry of the process.
func Shared() *Registry { return process }

// AddProducer says a component that records first requests runs in this
// process (so a reader may wait for them); the returned func undoes it.
func (r *Registry) AddProducer() (remove func()) {
	r.mu.Lock()
	r.producers++
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.producers--
			r.mu.Unlock()
		})
	}
}

// HasProducer reports whether first requests are recorded in this process.
func (r *Registry) HasProducer() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.producers > 0
}

// Observe records that pod uid had served a request by at; the earliest
// time is kept.
func (r *Registry) Observe(uid string, at time.Time) {
	if uid == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.first[uid]; ok {
		if at.Before(t) {
			r.first[uid] = at
		}
		return
	}
	if len(r.order) >= maxPods {
		delete(r.first, r.order[0])
		r.order = r.order[1:]
	}
	r.first[uid] = at
	r.order = append(r.order, uid)
}

// First returns when pod uid's first request was seen.
func (r *Registry) First(uid string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.first[uid]
	return t, ok
}
