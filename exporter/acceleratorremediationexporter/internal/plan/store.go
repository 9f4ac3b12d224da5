package plan

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// Store keeps every plan in memory and in its Backend. Save writes the
// backend first and the memory only once it took the plan, so what the
// store shows is what a restarted (or another) replica will read. Finished
// plans are kept for the retention period: the guard rails read cooldowns
// and actions per hour from them.
type Store struct {
	// writeMu serialises saves (the intake's and the engine's), so that
	// what one records is seen by the next.
	writeMu sync.Mutex
	mu      sync.Mutex
	backend Backend
	plans   map[string]*Plan
	// saved is the generation of each plan's last Save; Refresh keeps a
	// plan it did not see only when it was saved after the refresh began.
	saved   map[string]uint64
	gen     uint64
	retains time.Duration
}

// NewStore returns a store over a storage extension's client (nil keeps
// plans in memory only).
func NewStore(client storage.Client, retention time.Duration) *Store {
	var b Backend
	if client != nil {
		b = StorageBackend(client)
	}
	return NewStoreOn(b, retention)
}

// NewStoreOn returns a store over a backend (nil keeps plans in memory
// only).
func NewStoreOn(b Backend, retention time.Duration) *Store {
	return &Store{backend: b, plans: map[string]*Plan{}, saved: map[string]uint64{}, retains: retention}
}

// Load reads the plans the backend holds (a previous run's, or another
// replica's).
func (s *Store) Load(ctx context.Context) error {
	return s.Refresh(ctx)
}

// Refresh replaces the plans in memory by the backend's: another replica
// may have advanced, created or pruned plans. A plan saved here while the
// backend was read is kept.
func (s *Store) Refresh(ctx context.Context) error {
	if s.backend == nil {
		return nil
	}
	s.mu.Lock()
	began := s.gen
	s.mu.Unlock()
	loaded, err := s.backend.Load(ctx)
	if err != nil && loaded == nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	plans := make(map[string]*Plan, len(loaded))
	for _, p := range loaded {
		plans[p.ID] = p
	}
	for id, p := range s.plans {
		if s.saved[id] > began { // saved here after the read began: newer
			plans[id] = p
		}
	}
	for id := range s.saved {
		if _, ok := plans[id]; !ok {
			delete(s.saved, id)
		}
	}
	s.plans = plans
	return err // what could not be read, if anything
}

// Save persists p (a copy is kept: callers go on changing theirs only
// through Save). When the backend refuses it (another replica changed the
// plan) the store keeps its previous copy.
func (s *Store) Save(ctx context.Context, p *Plan) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	if old, ok := s.plans[p.ID]; ok && old.Reset != nil && (p.Reset == nil || p.Reset.At.Before(old.Reset.At)) {
		// A report from a node agent is a fact from outside, recorded
		// by the intake while the engine held its own copy: the engine's
		// save must not erase it.
		r := *old.Reset
		p.Reset = &r
	}
	s.mu.Unlock()
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	var cp Plan
	if err := json.Unmarshal(data, &cp); err != nil {
		return err
	}
	if s.backend != nil {
		if err := s.backend.Put(ctx, p, data); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	s.plans[p.ID] = &cp
	s.saved[p.ID] = s.gen
	return nil
}

// Forget deletes plans at once (a duplicate that joins an older plan).
func (s *Store) Forget(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if s.backend != nil {
		if err := s.backend.Delete(ctx, ids); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.plans, id)
		delete(s.saved, id)
	}
	return nil
}

// Prune forgets finished plans older than the retention.
func (s *Store) Prune(ctx context.Context, now time.Time) error {
	s.mu.Lock()
	var ids []string
	for id, p := range s.plans {
		if p.State.Terminal() && now.Sub(p.Finished) > s.retains {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	return s.Forget(ctx, ids...)
}

// Get returns a copy of the plan with id.
func (s *Store) Get(id string) (*Plan, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.plans[id]
	if !ok {
		return nil, false
	}
	return clone(p), true
}

// All returns copies of every plan, oldest first (plans are acted on in
// the order the failures were seen).
func (s *Store) All() []*Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Plan, 0, len(s.plans))
	for _, p := range s.plans {
		out = append(out, clone(p))
	}
	slices.SortFunc(out, func(a, b *Plan) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
	return out
}

// Open returns the oldest unfinished plan with key, if any. It runs for
// every health event, so it copies only the plan it returns.
func (s *Store) Open(key string) (*Plan, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *Plan
	for _, p := range s.plans {
		if p.State.Terminal() || p.Key() != key {
			continue
		}
		if found == nil || p.Created.Before(found.Created) || (p.Created.Equal(found.Created) && p.ID < found.ID) {
			found = p
		}
	}
	if found == nil {
		return nil, false
	}
	return clone(found), true
}

func clone(p *Plan) *Plan {
	cp := *p
	cp.Steps = slices.Clone(p.Steps)
	cp.Subject.Holders = slices.Clone(p.Subject.Holders)
	if p.Approval != nil {
		a := *p.Approval
		cp.Approval = &a
	}
	if p.Reset != nil {
		r := *p.Reset
		cp.Reset = &r
	}
	return &cp
}

// Duplicate is an open plan that an older open plan with the same key
// covers.
type Duplicate struct {
	Plan  *Plan
	Joins string // the older plan's id
}

// Duplicates returns the open plans, none of whose steps has started, that
// an older open plan with the same key already covers (two replicas each
// made one from the same device's events).
func (s *Store) Duplicates() []Duplicate {
	oldest := map[string]string{}
	var out []Duplicate
	for _, p := range s.All() { // oldest first
		if p.State.Terminal() {
			continue
		}
		first, ok := oldest[p.Key()]
		if !ok {
			oldest[p.Key()] = p.ID
			continue
		}
		if untouched(p) {
			out = append(out, Duplicate{Plan: p, Joins: first})
		}
	}
	return out
}

func untouched(p *Plan) bool {
	for _, st := range p.Steps {
		if st.State != StepPending || st.Attempts > 0 {
			return false
		}
	}
	return true
}
