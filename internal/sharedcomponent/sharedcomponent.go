// Package sharedcomponent lets one component instance serve several pipelines
// (metrics and logs) under one component ID: a receiver that emits device
// metrics and health events opens NVML or starts neuron-monitor once, and a
// processor that computes cost in the metrics pipeline can emit its findings
// into the logs pipeline. Start and Shutdown reach the instance once however
// many pipelines hold it, and the status it reports reaches every one of
// them.
package sharedcomponent

import (
	"context"
	"reflect"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
)

// Map holds the live instances of one component type, keyed by component ID.
type Map[V component.Component] struct {
	mu    sync.Mutex
	items map[component.ID]*Component[V]
}

// NewMap returns an empty map.
func NewMap[V component.Component]() *Map[V] {
	return &Map[V]{items: map[component.ID]*Component[V]{}}
}

// LoadOrStore returns the instance for id, creating it with create on first
// use.
func (m *Map[V]) LoadOrStore(id component.ID, create func() (V, error)) (*Component[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.items[id]; ok {
		return c, nil
	}
	v, err := create()
	if err != nil {
		return nil, err
	}
	c := &Component[V]{value: v, hosts: &hosts{}, remove: func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.items, id)
	}}
	m.items[id] = c
	return c, nil
}

// Component wraps a shared instance; it is itself a component.Component.
type Component[V component.Component] struct {
	value V
	hosts *hosts

	startOnce    sync.Once
	startErr     error
	shutdownOnce sync.Once
	shutdownErr  error
	remove       func()
}

// Unwrap returns the shared instance.
func (c *Component[V]) Unwrap() V { return c.value }

// Start starts the instance the first time any pipeline starts it. Every
// pipeline's host receives the instance's status from then on; one that
// starts late first receives the status last reported.
func (c *Component[V]) Start(ctx context.Context, host component.Host) error {
	c.hosts.add(host)
	c.startOnce.Do(func() { c.startErr = c.value.Start(ctx, c.hosts) })
	return c.startErr
}

// Shutdown stops the instance once and forgets it, so that a reloaded
// configuration builds a fresh one.
func (c *Component[V]) Shutdown(ctx context.Context) error {
	c.shutdownOnce.Do(func() {
		c.shutdownErr = c.value.Shutdown(ctx)
		c.remove()
	})
	return c.shutdownErr
}

// hosts is the host the shared instance sees: the first pipeline's
// extensions, and status reports passed to every pipeline's host. The
// collector keeps one status per pipeline instance of a component, so a
// report that reached only the first pipeline would leave the others at OK.
type hosts struct {
	mu        sync.Mutex
	first     component.Host
	reporters []componentstatus.Reporter
	last      *componentstatus.Event
}

var (
	_ component.Host           = (*hosts)(nil)
	_ componentstatus.Reporter = (*hosts)(nil)
)

func (h *hosts) add(host component.Host) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.first == nil {
		h.first = host
	}
	r, ok := host.(componentstatus.Reporter)
	if !ok || slices.ContainsFunc(h.reporters, func(known componentstatus.Reporter) bool { return same(known, r) }) {
		return
	}
	if h.last != nil {
		r.Report(h.last)
	}
	h.reporters = append(h.reporters, r)
}

// same reports whether two reporters are one host started twice (tests
// that give both pipelines one host); == on a host that is a map or a
// slice would panic.
func same(a, b componentstatus.Reporter) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// GetExtensions implements component.Host: every pipeline has the same.
func (h *hosts) GetExtensions() map[component.ID]component.Component {
	h.mu.Lock()
	first := h.first
	h.mu.Unlock()
	return first.GetExtensions()
}

// Report implements componentstatus.Reporter. It reports under the lock so
// that every host sees the events in the same order.
func (h *hosts) Report(e *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = e
	for _, r := range h.reporters {
		r.Report(e)
	}
}
