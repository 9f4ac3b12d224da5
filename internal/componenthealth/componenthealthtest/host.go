// Package componenthealthtest has a host that records the status events a
// component reports, for tests.
package componenthealthtest // import "github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"

import (
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
)

// Host is a component.Host without extensions that records every status
// event. The zero value is ready to use; it is safe for concurrent use.
type Host struct {
	// Extensions is what GetExtensions returns.
	Extensions map[component.ID]component.Component

	mu     sync.Mutex
	events []*componentstatus.Event
}

var _ componentstatus.Reporter = (*Host)(nil)

// GetExtensions implements component.Host.
func (h *Host) GetExtensions() map[component.ID]component.Component { return h.Extensions }

// Report implements componentstatus.Reporter.
func (h *Host) Report(e *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

// Events returns the events reported so far, oldest first.
func (h *Host) Events() []*componentstatus.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*componentstatus.Event(nil), h.events...)
}

// Statuses returns the statuses reported so far, oldest first.
func (h *Host) Statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]componentstatus.Status, len(h.events))
	for i, e := range h.events {
		out[i] = e.Status()
	}
	return out
}

// Last returns the latest event, or nil.
func (h *Host) Last() *componentstatus.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.events) == 0 {
		return nil
	}
	return h.events[len(h.events)-1]
}
