// Package baseline keeps, per workload, device model and signal, what
// "normal" looks like for that workload: an exponentially weighted,
// time-weighted average whose weight halves every half-life of data time.
// The accelerator_cost processor compares training intervals' tensor (or
// SM) activity with it to find inefficiency; the accelerator_diagnosis
// processor compares inference endpoints' TTFT and ITL percentiles with
// theirs to find latency regressions. Baselines outlive restarts through a storage extension
// (Marshal / Unmarshal), expire when their workload has not run for a TTL,
// and are capped in number.
package baseline

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// Key names one baseline.
type Key struct {
	// Workload is "<namespace>/<workload name>" (or the name alone outside
	// Kubernetes); for an inference endpoint, the endpoint's key.
	Workload string
	// Model is hw.model of the device (of a training workload), or the
	// served model (of an inference endpoint).
	Model string
	// Signal is what the baseline averages (accelerator.tensor.active or
	// accelerator.sm.active, an endpoint's ttft_p95 or itl_p95): signals are
	// not comparable with each other.
	Signal string
}

type entry struct {
	// sum and weight are the decayed Σ value·seconds and Σ seconds; the
	// baseline is sum / weight. Keeping both makes the first hours a plain
	// time-weighted mean instead of being dominated by the first sample.
	sum, weight float64
	// sumSq is the decayed Σ value²·seconds: with sum and weight it gives
	// the spread of the values around the baseline (Spread).
	sumSq   float64
	samples int
	// updated is the wall-clock time of the last update, for the TTL.
	updated time.Time
}

// Store holds baselines. It is not safe for concurrent use.
type Store struct {
	halfLife   time.Duration
	ttl        time.Duration
	minSamples int
	maxEntries int
	m          map[Key]*entry
	dirty      bool
}

// New returns an empty store.
func New(halfLife, ttl time.Duration, minSamples, maxEntries int) *Store {
	return &Store{halfLife: halfLife, ttl: ttl, minSamples: minSamples, maxEntries: maxEntries, m: map[Key]*entry{}}
}

// Get returns the baseline and whether it has enough samples to be trusted.
func (s *Store) Get(k Key) (value float64, samples int, warm bool) {
	e, ok := s.m[k]
	if !ok || e.weight <= 0 {
		return 0, 0, false
	}
	return e.sum / e.weight, e.samples, e.samples >= s.minSamples
}

// Spread is the time-weighted standard deviation of the values folded into
// a baseline (0 when unknown): how far the workload's own normal strays
// from its mean, so that a noisy or bursty signal is not judged as if it
// were flat.
func (s *Store) Spread(k Key) float64 {
	e, ok := s.m[k]
	if !ok || e.weight <= 0 {
		return 0
	}
	mean := e.sum / e.weight
	return math.Sqrt(math.Max(0, e.sumSq/e.weight-mean*mean))
}

// Update folds in one interval of length dt at activity v.
func (s *Store) Update(k Key, v float64, dt time.Duration, now time.Time) {
	if dt <= 0 || math.IsNaN(v) || v < 0 {
		return
	}
	e, ok := s.m[k]
	if !ok {
		if len(s.m) >= s.maxEntries {
			s.evictStalest()
		}
		e = &entry{}
		s.m[k] = e
	}
	decay := math.Exp2(-dt.Seconds() / s.halfLife.Seconds())
	e.sum = e.sum*decay + v*dt.Seconds()
	e.sumSq = e.sumSq*decay + v*v*dt.Seconds()
	e.weight = e.weight*decay + dt.Seconds()
	e.samples++
	e.updated = now
	s.dirty = true
}

func (s *Store) evictStalest() {
	var oldest Key
	var at time.Time
	first := true
	for k, e := range s.m {
		if first || e.updated.Before(at) {
			oldest, at, first = k, e.updated, false
		}
	}
	delete(s.m, oldest)
}

// Expire forgets baselines not updated within the TTL.
func (s *Store) Expire(now time.Time) {
	for k, e := range s.m {
		if now.Sub(e.updated) > s.ttl {
			delete(s.m, k)
			s.dirty = true
		}
	}
}

// Len is the number of baselines held.
func (s *Store) Len() int { return len(s.m) }

// Dirty reports whether the store changed since the last Marshal.
func (s *Store) Dirty() bool { return s.dirty }

// formatVersion is bumped when the stored form changes incompatibly.
const formatVersion = 1

type stored struct {
	Version   int           `json:"version"`
	Baselines []storedEntry `json:"baselines"`
}

type storedEntry struct {
	Workload string  `json:"workload"`
	Model    string  `json:"model"`
	Signal   string  `json:"signal"`
	Sum      float64 `json:"sum"`
	Weight   float64 `json:"weight"`
	// SumSq is absent in what builds before the spread was kept wrote:
	// such a baseline restores with no spread, which new windows widen.
	SumSq       *float64 `json:"sum_sq,omitempty"`
	Samples     int      `json:"samples"`
	UpdatedUnix int64    `json:"updated_unix"`
}

// Marshal encodes the store (sorted, so equal stores encode equally) and
// clears the dirty flag.
func (s *Store) Marshal() ([]byte, error) {
	out := stored{Version: formatVersion, Baselines: make([]storedEntry, 0, len(s.m))}
	for k, e := range s.m {
		sumSq := e.sumSq
		out.Baselines = append(out.Baselines, storedEntry{
			Workload: k.Workload, Model: k.Model, Signal: k.Signal,
			Sum: e.sum, Weight: e.weight, SumSq: &sumSq, Samples: e.samples, UpdatedUnix: e.updated.Unix(),
		})
	}
	sort.Slice(out.Baselines, func(i, j int) bool {
		a, b := out.Baselines[i], out.Baselines[j]
		if a.Workload != b.Workload {
			return a.Workload < b.Workload
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Signal < b.Signal
	})
	b, err := json.Marshal(out)
	if err == nil {
		s.dirty = false
	}
	return b, err
}

// ErrUnknownVersion is returned for data written by a newer format.
var ErrUnknownVersion = errors.New("stored baselines have an unknown format version")

// Unmarshal replaces the store's content with stored data, dropping entries
// that are expired, malformed or over the cap. It returns how many entries it
// dropped as malformed.
func (s *Store) Unmarshal(data []byte, now time.Time) (dropped int, err error) {
	var in stored
	if err := json.Unmarshal(data, &in); err != nil {
		return 0, fmt.Errorf("stored baselines are not valid JSON: %w", err)
	}
	if in.Version != formatVersion {
		return 0, fmt.Errorf("%w: %d (this build reads %d)", ErrUnknownVersion, in.Version, formatVersion)
	}
	s.m = make(map[Key]*entry, len(in.Baselines))
	for _, b := range in.Baselines {
		ok := b.Weight > 0 && b.Sum >= 0 && b.Samples > 0 &&
			!math.IsNaN(b.Sum) && !math.IsInf(b.Sum, 0) && !math.IsInf(b.Weight, 0) &&
			b.Workload != ""
		if !ok {
			dropped++
			continue
		}
		updated := time.Unix(b.UpdatedUnix, 0)
		if now.Sub(updated) > s.ttl || len(s.m) >= s.maxEntries {
			continue
		}
		// Without a stored sum of squares the spread is unknown: start
		// it at zero (mean² · weight).
		sumSq := b.Sum * b.Sum / b.Weight
		if b.SumSq != nil && *b.SumSq >= 0 && !math.IsNaN(*b.SumSq) && !math.IsInf(*b.SumSq, 0) {
			sumSq = *b.SumSq
		}
		s.m[Key{b.Workload, b.Model, b.Signal}] = &entry{sum: b.Sum, weight: b.Weight, sumSq: sumSq, samples: b.Samples, updated: updated}
	}
	s.dirty = false
	return dropped, nil
}
