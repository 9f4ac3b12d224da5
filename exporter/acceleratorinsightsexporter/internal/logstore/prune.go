package logstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Acknowledge and dismiss decisions outlive their findings on purpose: a
// finding evicted by max_findings, or not raised for a while, keeps its
// state should it come back. Without a bound they would pile up in the
// storage extension for ever, one per finding the fleet ever had; a
// decision whose finding is not held and that nothing touched (no raise, no
// change) for the retention is dropped.

// pruneEvery is how often PruneDue looks.
const pruneEvery = time.Hour

// SetRetention sets how long a decision outlives its finding (0: for ever).
func (st *Store) SetRetention(d time.Duration) {
	st.mu.Lock()
	st.retention = d
	st.mu.Unlock()
}

// PruneDue drops the decisions past the retention, at most once per
// pruneEvery of now (the first call prunes), and saves the rest to the
// storage when any went. It returns how many went.
func (st *Store) PruneDue(ctx context.Context, now time.Time) (int, error) {
	st.mu.Lock()
	if st.retention <= 0 || now.Before(st.nextPrune) {
		st.mu.Unlock()
		return 0, nil
	}
	st.nextPrune = now.Add(pruneEvery)
	cutoff := now.Add(-st.retention)
	n := 0
	for id, d := range st.decisions {
		if _, held := st.findings[id]; held || !d.seen().Before(cutoff) {
			continue
		}
		delete(st.decisions, id)
		n++
	}
	var data []byte
	c := st.storage
	if n > 0 && c != nil {
		data, _ = json.Marshal(st.decisions)
	}
	st.mu.Unlock()
	if n > 0 {
		st.version.Add(1)
	}
	if data != nil {
		if err := c.Set(ctx, statesKey, data); err != nil {
			return n, fmt.Errorf("%d decisions past the retention were dropped but the storage was not updated (they come back on restart): %w", n, err)
		}
	}
	return n, nil
}

// Decisions returns a copy of the decisions held, by finding id.
func (st *Store) Decisions() map[string]Decision {
	st.mu.RLock()
	defer st.mu.RUnlock()
	out := make(map[string]Decision, len(st.decisions))
	for id, d := range st.decisions {
		out[id] = d
	}
	return out
}
