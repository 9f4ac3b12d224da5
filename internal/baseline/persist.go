package baseline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
)

// PersistSettings say which Store a processor keeps in which storage
// extension, and how it reports on it.
type PersistSettings struct {
	// Store is the baselines kept; Lock is the owner's lock over it (the
	// processor's own mutex: the Store is not safe on its own).
	Store *Store
	Lock  sync.Locker
	// What names the baselines in messages ("training baselines"), Key is
	// their storage key.
	What, Key string
	// Extension is the storage extension (the config's baselines.storage);
	// Self the processor asking for a client.
	Extension, Self component.ID
	// SaveInterval between writes of changed baselines.
	SaveInterval time.Duration
	Now          func() time.Time
	Logger       *zap.Logger
	// Warn rate-limits the save loop's warnings; Status carries a storage
	// that cannot be read or written (StatusSource) until it works again.
	Warn         *componenthealth.Logger
	Status       *componenthealth.Problems
	StatusSource string
}

// Persisted keeps a Store across restarts: restored at Start, written every
// SaveInterval when it changed, and once more at Shutdown. accelerator_cost
// keeps its training baselines this way and accelerator_diagnosis its
// endpoints' latency baselines.
type Persisted struct {
	s      PersistSettings
	client storage.Client
	stop   chan struct{}
	done   chan struct{}
}

// StartPersisted opens the storage client, restores what the last run
// saved and starts the save loop. Only a missing or wrong extension is an
// error (the config names it); an unreadable record is logged and the
// baselines rebuild.
func StartPersisted(ctx context.Context, host component.Host, s PersistSettings) (*Persisted, error) {
	e, ok := host.GetExtensions()[s.Extension]
	if !ok {
		return nil, fmt.Errorf("baselines.storage: extension %q is not running; add it under `extensions:` and to `service.extensions`", s.Extension)
	}
	se, ok := e.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("baselines.storage: extension %q is not a storage extension (use file_storage)", s.Extension)
	}
	client, err := se.GetClient(ctx, component.KindProcessor, s.Self, s.Key)
	if err != nil {
		return nil, fmt.Errorf("baselines.storage: %q gave no client: %w", s.Extension, err)
	}
	p := &Persisted{s: s, client: client, stop: make(chan struct{}), done: make(chan struct{})}
	p.load(ctx)
	go p.saveLoop()
	return p, nil
}

// load restores what the last run saved. A broken or unreadable record is
// logged and the owner starts with no baselines: they rebuild within
// baselines.min_samples intervals.
func (p *Persisted) load(ctx context.Context) {
	data, err := p.client.Get(ctx, p.s.Key)
	if err != nil {
		err = fmt.Errorf("reading %s from %s: %w", p.s.What, p.s.Extension, err)
		p.s.Logger.Error("starting without stored "+p.s.What, zap.Error(err))
		p.s.Status.Fail(p.s.StatusSource, err)
		return
	}
	if data == nil {
		return
	}
	p.s.Lock.Lock()
	dropped, err := p.s.Store.Unmarshal(data, p.s.Now())
	n := p.s.Store.Len()
	p.s.Lock.Unlock()
	if err != nil {
		p.s.Logger.Error("stored "+p.s.What+" are unreadable; starting without them",
			zap.String("storage", p.s.Extension.String()), zap.Error(err))
		return
	}
	if dropped > 0 {
		p.s.Logger.Warn("dropped malformed stored "+p.s.What, zap.Int("dropped", dropped))
	}
	p.s.Logger.Info(p.s.What+" restored", zap.Int("baselines", n))
}

// Save writes the baselines when they changed since the last save; saved
// says whether it wrote them.
func (p *Persisted) Save(ctx context.Context) (saved bool, err error) {
	p.s.Lock.Lock()
	if !p.s.Store.Dirty() {
		p.s.Lock.Unlock()
		return false, nil
	}
	data, err := p.s.Store.Marshal()
	p.s.Lock.Unlock()
	if err != nil {
		return false, fmt.Errorf("encoding %s: %w", p.s.What, err)
	}
	if err := p.client.Set(ctx, p.s.Key, data); err != nil {
		return false, fmt.Errorf("saving %s to %s: %w", p.s.What, p.s.Extension, err)
	}
	return true, nil
}

func (p *Persisted) saveLoop() {
	defer close(p.done)
	ticker := time.NewTicker(p.s.SaveInterval)
	defer ticker.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-ticker.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.s.SaveInterval)
		// A save that works clears a storage that could not be read at
		// Start or written before.
		switch saved, err := p.Save(ctx); {
		case err != nil:
			p.s.Warn.Warn("baselines-save", "could not save "+p.s.What+"; will retry", zap.Error(err))
			p.s.Status.Fail(p.s.StatusSource, err)
		case saved:
			p.s.Status.Clear(p.s.StatusSource)
		}
		cancel()
	}
}

// Close stops the save loop, saves the baselines one last time and closes
// the storage client.
func (p *Persisted) Close(ctx context.Context) error {
	close(p.stop)
	<-p.done
	_, err := p.Save(ctx)
	if cerr := p.client.Close(ctx); cerr != nil {
		err = errors.Join(err, fmt.Errorf("closing the baselines storage client: %w", cerr))
	}
	return err
}
