package acceleratorinsightsexporter

import (
	"context"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/memstore"
)

// backend is where the handlers read the fleet's metrics from. Both
// implementations return a fleet.Snapshot, and one set of views turns it
// into the API's answers, so the memory and Prometheus backends answer
// alike. Health events and findings are logs and come from the log store
// whatever the backend.
type backend interface {
	Snapshot(ctx context.Context) (*fleet.Snapshot, error)
	Series(ctx context.Context, refs []fleet.SeriesRef, window time.Duration) ([]fleet.Series, error)
	Name() string
}

// memoryBackend reads the in-memory model.
type memoryBackend struct{ store *memstore.Store }

func (m memoryBackend) Snapshot(context.Context) (*fleet.Snapshot, error) {
	return m.store.Snapshot(), nil
}

func (m memoryBackend) Series(_ context.Context, refs []fleet.SeriesRef, window time.Duration) ([]fleet.Series, error) {
	return m.store.Series(refs, window), nil
}

func (memoryBackend) Name() string { return BackendMemory }

// Version changes whenever the model may have.
func (m memoryBackend) Version() uint64 { return m.store.Version() }

// versioned is a backend that can tell when its data changed (the memory
// one; Prometheus cannot, short of asking).
type versioned interface{ Version() uint64 }
