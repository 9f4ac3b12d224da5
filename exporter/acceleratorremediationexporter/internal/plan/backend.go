package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// Backend is where a Store persists plans: the storage extension of one
// replica, or the cluster (internal/kube's PlanStore: one ConfigMap per
// plan), which every replica reads, so that a standby that takes the lease
// resumes the old leader's plans.
type Backend interface {
	// Load returns every plan kept. An error with plans names objects it
	// could not read and skipped.
	Load(ctx context.Context) ([]*Plan, error)
	// Put writes one plan; data is its JSON. It fails, changing nothing,
	// when another writer changed the plan since this one last read or
	// wrote it (where the backend can tell).
	Put(ctx context.Context, p *Plan, data []byte) error
	// Delete forgets plans.
	Delete(ctx context.Context, ids []string) error
}

const (
	indexKey   = "plans"
	planPrefix = "plan/"
)

// storageBackend keeps plans in a storage extension's client: each plan
// under plan/<id>, and the index of plan ids, written in one batch with a
// new plan so that a restart sees either the old or the new index, never
// one naming a plan that is not there.
type storageBackend struct {
	client storage.Client
	mu     sync.Mutex
	ids    map[string]bool
}

// StorageBackend persists plans in a storage extension's client.
func StorageBackend(c storage.Client) Backend {
	return &storageBackend{client: c, ids: map[string]bool{}}
}

func (b *storageBackend) Load(ctx context.Context) ([]*Plan, error) {
	raw, err := b.client.Get(ctx, indexKey)
	if err != nil || raw == nil {
		return nil, err
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, fmt.Errorf("plan index: %w", err)
	}
	var out []*Plan
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range ids {
		data, err := b.client.Get(ctx, planPrefix+id)
		if err != nil {
			return nil, fmt.Errorf("plan %s: %w", id, err)
		}
		if data == nil {
			continue
		}
		var p Plan
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, fmt.Errorf("plan %s: %w", id, err)
		}
		b.ids[id] = true
		out = append(out, &p)
	}
	return out, nil
}

func (b *storageBackend) Put(ctx context.Context, p *Plan, data []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	ops := []*storage.Operation{storage.SetOperation(planPrefix+p.ID, data)}
	if !b.ids[p.ID] {
		idx, err := json.Marshal(b.sortedIDs(p.ID))
		if err != nil {
			return err
		}
		ops = append(ops, storage.SetOperation(indexKey, idx))
	}
	if err := b.client.Batch(ctx, ops...); err != nil {
		return err
	}
	b.ids[p.ID] = true
	return nil
}

func (b *storageBackend) Delete(ctx context.Context, ids []string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	ops := make([]*storage.Operation, 0, len(ids)+1)
	for _, id := range ids {
		delete(b.ids, id)
		ops = append(ops, storage.DeleteOperation(planPrefix+id))
	}
	idx, err := json.Marshal(b.sortedIDs(""))
	if err != nil {
		return err
	}
	return b.client.Batch(ctx, append(ops, storage.SetOperation(indexKey, idx))...)
}

// sortedIDs is the index, with extra added when not empty.
func (b *storageBackend) sortedIDs(extra string) []string {
	ids := make([]string, 0, len(b.ids)+1)
	for id := range b.ids {
		ids = append(ids, id)
	}
	if extra != "" && !b.ids[extra] {
		ids = append(ids, extra)
	}
	sort.Strings(ids)
	return ids
}
