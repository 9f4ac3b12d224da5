package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
)

const (
	indexKey   = "plans"
	planPrefix = "plan/"
)

// Store keeps every plan in memory and in the storage extension. Save
// writes a plan and the index of plan ids in one batch, so a restart sees
// either the old or the new plan, never an index naming a plan that is not
// there. Finished plans are kept for the retention period: the guard rails
// read cooldowns and actions per hour from them.
type Store struct {
	mu      sync.Mutex
	client  storage.Client
	plans   map[string]*Plan
	retains time.Duration
}

// NewStore returns a store over client (nil keeps plans in memory only).
func NewStore(client storage.Client, retention time.Duration) *Store {
	return &Store{client: client, plans: map[string]*Plan{}, retains: retention}
}

// Load reads the plans a previous run saved.
func (s *Store) Load(ctx context.Context) error {
	if s.client == nil {
		return nil
	}
	raw, err := s.client.Get(ctx, indexKey)
	if err != nil || raw == nil {
		return err
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil {
		return fmt.Errorf("plan index: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		data, err := s.client.Get(ctx, planPrefix+id)
		if err != nil {
			return fmt.Errorf("plan %s: %w", id, err)
		}
		if data == nil {
			continue
		}
		var p Plan
		if err := json.Unmarshal(data, &p); err != nil {
			return fmt.Errorf("plan %s: %w", id, err)
		}
		s.plans[id] = &p
	}
	return nil
}

// Save persists p (a copy is kept: callers go on changing theirs only
// through Save).
func (s *Store) Save(ctx context.Context, p *Plan) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var cp Plan
	if err := json.Unmarshal(data, &cp); err != nil {
		return err
	}
	_, known := s.plans[p.ID]
	s.plans[p.ID] = &cp
	if s.client == nil {
		return nil
	}
	ops := []*storage.Operation{storage.SetOperation(planPrefix+p.ID, data)}
	if !known {
		idx, err := json.Marshal(s.idsLocked())
		if err != nil {
			return err
		}
		ops = append(ops, storage.SetOperation(indexKey, idx))
	}
	return s.client.Batch(ctx, ops...)
}

// Prune forgets finished plans older than the retention.
func (s *Store) Prune(ctx context.Context, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ops []*storage.Operation
	for id, p := range s.plans {
		if p.State.Terminal() && now.Sub(p.Finished) > s.retains {
			delete(s.plans, id)
			ops = append(ops, storage.DeleteOperation(planPrefix+id))
		}
	}
	if len(ops) == 0 || s.client == nil {
		return nil
	}
	idx, err := json.Marshal(s.idsLocked())
	if err != nil {
		return err
	}
	return s.client.Batch(ctx, append(ops, storage.SetOperation(indexKey, idx))...)
}

func (s *Store) idsLocked() []string {
	ids := make([]string, 0, len(s.plans))
	for id := range s.plans {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
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

// Open returns the unfinished plan with key, if any.
func (s *Store) Open(key string) (*Plan, bool) {
	for _, p := range s.All() {
		if !p.State.Terminal() && p.Key() == key {
			return p, true
		}
	}
	return nil, false
}

func clone(p *Plan) *Plan {
	cp := *p
	cp.Steps = slices.Clone(p.Steps)
	cp.Subject.Holders = slices.Clone(p.Subject.Holders)
	if p.Approval != nil {
		a := *p.Approval
		cp.Approval = &a
	}
	return &cp
}
