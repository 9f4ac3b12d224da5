// Package sharedcomponent lets one component instance serve several pipelines
// (metrics and logs) under one component ID: a receiver that emits device
// metrics and health events opens NVML or starts neuron-monitor once, and a
// processor that computes cost in the metrics pipeline can emit its findings
// into the logs pipeline. Start and Shutdown reach the instance once however
// many pipelines hold it.
package sharedcomponent

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
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
	c := &Component[V]{value: v, remove: func() {
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

	startOnce    sync.Once
	startErr     error
	shutdownOnce sync.Once
	shutdownErr  error
	remove       func()
}

// Unwrap returns the shared instance.
func (c *Component[V]) Unwrap() V { return c.value }

// Start starts the instance the first time any pipeline starts it.
func (c *Component[V]) Start(ctx context.Context, host component.Host) error {
	c.startOnce.Do(func() { c.startErr = c.value.Start(ctx, host) })
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
