package cumulative // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/cumulative"

import (
	"math"
	"slices"
	"time"

	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// An exemplar belongs to the interval it was observed in. A Prometheus
// client keeps, per bucket, the exemplar of the latest observation that
// came with one, and serves it at every scrape until a newer one replaces
// it: repeated on every cumulative point, one slow request's trace would
// be offered as the example of every later interval. So a series' point
// carries the exemplars its sources' buckets did not carry at the previous
// scrape (by fingerprint: labels, value and timestamp). Comparing with the
// previous scrape, rather than the exemplar's timestamp with the scrape's
// time, needs no clock shared with the server and works for exemplars
// without a timestamp.
//
// What a source serves when it is first seen was observed before the
// point's span whenever its counts are left out of it: a source that
// appears on a known series (counted from now on, tracker.go advance), and
// every source on a first scrape without _created (the span starts at the
// point's own time). Its exemplars are then remembered and not emitted;
// only later ones are new. On a first scrape whose start comes from
// _created they are all emitted, having been observed since the start. An
// exemplar whose timestamp is before the point's start is never emitted.

// freshExemplars returns the exemplars of the sources that are new since
// the previous scrape and not before start, and remembers this scrape's.
func (s *series) freshExemplars(ps []*normalize.Point, start time.Time) []normalize.Exemplar {
	var out []normalize.Exemplar
	startMilli := start.UnixMilli()
	for _, p := range ps {
		src := s.sources[p.Source]
		quiet := src.quietExemplars
		src.quietExemplars = false
		if len(p.Exemplars) == 0 {
			src.exemplars = nil
			continue
		}
		seen := src.exemplars
		if seen == nil {
			seen = make(map[float64]uint64, len(p.Exemplars))
			src.exemplars = seen
		}
		for i := range p.Exemplars {
			e := &p.Exemplars[i]
			fp := fingerprint(e)
			if old, ok := seen[e.Bucket]; !ok || old != fp {
				seen[e.Bucket] = fp
				if !quiet && !before(e, startMilli) {
					out = append(out, *e)
				}
			}
		}
		if len(seen) > len(p.Exemplars) {
			// A bucket lost its exemplar (the server restarted): forget
			// it, so that one coming back counts as new.
			for b := range seen {
				if !slices.ContainsFunc(p.Exemplars, func(e normalize.Exemplar) bool { return e.Bucket == b }) {
					delete(seen, b)
				}
			}
		}
	}
	return out
}

// before reports whether an exemplar was observed before the millisecond
// startMilli (truncated, so one within the start's millisecond is kept). A
// timestamp OTLP cannot hold says nothing; it becomes the scrape's time
// (emit.go).
func before(e *normalize.Exemplar, startMilli int64) bool {
	ms, ok := e.UnixMilli()
	return ok && ms < startMilli
}

// fingerprint is FNV-1a over what tells one exemplar from another.
func fingerprint(e *normalize.Exemplar) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	word := func(v uint64) {
		for i := 0; i < 8; i++ {
			h = (h ^ (v & 0xff)) * prime
			v >>= 8
		}
	}
	bytes := func(b []byte) {
		for _, c := range b {
			h = (h ^ uint64(c)) * prime
		}
	}
	str := func(s string) {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * prime
		}
	}
	word(math.Float64bits(e.Value))
	word(uint64(e.Timestamp))
	bytes(e.TraceID[:])
	bytes(e.SpanID[:])
	for _, l := range e.Filtered {
		word(uint64(len(l.Name)))
		str(l.Name)
		word(uint64(len(l.Value)))
		str(l.Value)
	}
	return h
}
