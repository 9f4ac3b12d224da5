// Package cumulative turns the normalized points of successive scrapes of one
// target into cumulative series with start times: one series per (model,
// metric, attribute), summed or averaged over its source series (vLLM
// engines, SGLang ranks, Triton model versions).
//
// Start times come from the sources' _created samples when the server
// exposes them, else from the first scrape that saw the series (a "true
// reset point": start time equal to the point's time). A counter or
// histogram whose value, count or _created goes backwards in any source
// starts again: new start time, and values counted from there, so no
// consumer ever sees a negative delta.
package cumulative // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/cumulative"

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// Output is one emitted series at one scrape.
type Output struct {
	Model     string
	Metric    string
	Kind      normalize.Kind
	AttrKey   string
	AttrValue string
	// Start is zero for gauges.
	Start time.Time
	Time  time.Time
	Value float64
	Hist  normalize.Histogram
	// Delta is the increase since the previous scrape (counters only),
	// valid when HasDelta: the first scrape of a series has none.
	Delta    float64
	HasDelta bool
	// Exemplars are the histogram's exemplars observed since the previous
	// scrape (exemplars.go), of all its sources.
	Exemplars []normalize.Exemplar
}

// Tracker keeps the state of one target's cumulative series. It is not safe
// for concurrent use; one target is scraped by one goroutine at a time.
type Tracker struct {
	series map[seriesKey]*series
}

// New returns an empty tracker.
func New() *Tracker {
	return &Tracker{series: map[seriesKey]*series{}}
}

type seriesKey struct {
	model, metric, attr string
}

type series struct {
	start    time.Time
	lastSeen time.Time
	last     value // last emitted value, for Delta
	sources  map[string]*source
	seen     bool // seen in the current Update
}

type source struct {
	last    value
	base    value // counted before the series' start time; subtracted
	created float64
	// exemplars are the fingerprints of the exemplars the source's
	// buckets carried at the last scrape, by bucket bound (nil until one
	// has any).
	exemplars map[float64]uint64
	// quietExemplars: the exemplars the source serves at its next scrape
	// predate the series' span (its counts were left out of it); they are
	// remembered, not emitted (exemplars.go).
	quietExemplars bool
}

// value is a counter value or a histogram.
type value struct {
	v float64
	h normalize.Histogram
}

// Len reports how many cumulative series the tracker holds.
func (t *Tracker) Len() int { return len(t.series) }

// Update folds one scrape's points, taken at now, into the tracker's state
// and returns the series to emit, sorted by model, metric and attribute.
// Series absent from this scrape are forgotten; if they come back they
// start anew. Errors name sources that were left out (histograms whose
// bounds disagree with the other sources of the same series).
func (t *Tracker) Update(now time.Time, points []normalize.Point) ([]Output, []error) {
	groups := map[seriesKey][]*normalize.Point{}
	var keys []seriesKey
	for i := range points {
		p := &points[i]
		k := seriesKey{p.Model, p.Metric, p.AttrValue}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], p)
	}
	slices.SortFunc(keys, func(a, b seriesKey) int {
		return cmp.Or(strings.Compare(a.model, b.model), strings.Compare(a.metric, b.metric), strings.Compare(a.attr, b.attr))
	})

	var errs []error
	outs := make([]Output, 0, len(keys))
	for _, k := range keys {
		ps := groups[k]
		slices.SortFunc(ps, func(a, b *normalize.Point) int { return strings.Compare(a.Source, b.Source) })
		first := ps[0]
		out := Output{Model: k.model, Metric: k.metric, Kind: first.Kind, AttrKey: first.AttrKey, AttrValue: k.attr, Time: now}
		switch first.Kind {
		case normalize.KindGauge:
			out.Value = aggregateGauge(ps, first.Agg)
		default:
			var dropped []error
			ps, dropped = sameBounds(ps)
			errs = append(errs, dropped...)
			t.cumulate(k, now, ps, &out)
		}
		outs = append(outs, out)
	}
	for k, s := range t.series {
		if !s.seen {
			delete(t.series, k)
			continue
		}
		s.seen = false
	}
	return outs, errs
}

func aggregateGauge(ps []*normalize.Point, agg normalize.Agg) float64 {
	var sum float64
	for _, p := range ps {
		sum += p.Value
	}
	if agg == normalize.AggMean {
		return sum / float64(len(ps))
	}
	return sum
}

// sameBounds keeps the histogram sources whose bounds match the first one's;
// sums of histograms with different buckets mean nothing.
func sameBounds(ps []*normalize.Point) ([]*normalize.Point, []error) {
	if ps[0].Kind != normalize.KindHistogram {
		return ps, nil
	}
	var errs []error
	kept := ps[:1]
	for _, p := range ps[1:] {
		if slices.Equal(p.Hist.Bounds, ps[0].Hist.Bounds) {
			kept = append(kept, p)
			continue
		}
		errs = append(errs, fmt.Errorf("%s for model %q: source %s has bucket bounds %v, unlike %s's %v; left out",
			p.Metric, p.Model, sourceName(p.Source), p.Hist.Bounds, sourceName(ps[0].Source), ps[0].Hist.Bounds))
	}
	return kept, errs
}

func sourceName(s string) string {
	if s == "" {
		return "{}"
	}
	return "{" + s + "}"
}

func (t *Tracker) cumulate(k seriesKey, now time.Time, ps []*normalize.Point, out *Output) {
	s := t.series[k]
	if s == nil {
		s = &series{sources: make(map[string]*source, len(ps))}
		for _, p := range ps {
			s.sources[strings.Clone(p.Source)] = &source{last: valueOf(p), created: p.Created}
		}
		s.start = firstStart(ps, now)
		if !s.start.Before(now) {
			// No _created: the span starts now, and nothing the page
			// serves was observed within it.
			for _, src := range s.sources {
				src.quietExemplars = true
			}
		}
		// Keys must not pin the scraped document in memory.
		t.series[cloneKey(k)] = s
	} else {
		t.advance(s, now, ps)
	}
	s.seen = true
	prevLast, hadPrev := s.last, s.lastSeen != (time.Time{})
	cur := s.total(ps, out.Kind)
	resetNow := s.start.After(s.lastSeen) || !hadPrev
	s.last = cur
	s.lastSeen = now

	out.Start = s.start
	out.Value = cur.v
	out.Hist = cur.h
	if out.Kind == normalize.KindHistogram {
		out.Exemplars = s.freshExemplars(ps, s.start)
	}
	if out.Kind == normalize.KindCounter && hadPrev {
		out.HasDelta = true
		if resetNow {
			out.Delta = cur.v
		} else {
			out.Delta = cur.v - prevLast.v
		}
	}
}

func cloneKey(k seriesKey) seriesKey {
	return seriesKey{strings.Clone(k.model), strings.Clone(k.metric), strings.Clone(k.attr)}
}

// firstStart is the start time of a series seen for the first time: the
// earliest _created of its sources when all of them say, else now.
func firstStart(ps []*normalize.Point, now time.Time) time.Time {
	earliest := math.Inf(1)
	for _, p := range ps {
		if p.Created <= 0 {
			return now
		}
		earliest = math.Min(earliest, p.Created)
	}
	start := unixFloat(earliest)
	if start.After(now) {
		return now
	}
	return start
}

func unixFloat(sec float64) time.Time {
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(math.Round(frac*1e9)))
}

// advance compares the sources of a known series with their previous
// values. If any went backwards, restarted, appeared or vanished, the series
// starts again at the previous scrape, and each surviving source's previous
// value becomes its base, so the emitted value counts only what happened
// since the new start.
func (t *Tracker) advance(s *series, now time.Time, ps []*normalize.Point) {
	reset := false
	allRestarted := true
	restartAt := math.Inf(1)
	for _, p := range ps {
		src := s.sources[p.Source]
		switch {
		case src == nil:
			reset = true
			allRestarted = false
		case restarted(src, p):
			reset = true
			if p.Created > 0 && unixFloat(p.Created).After(s.lastSeen) {
				restartAt = math.Min(restartAt, p.Created)
			} else {
				allRestarted = false
			}
		default:
			allRestarted = false
		}
	}
	if len(ps) != len(s.sources) {
		reset = true // a source vanished (or appeared)
	}
	if !reset {
		for _, p := range ps {
			src := s.sources[p.Source]
			src.last, src.created = valueOf(p), p.Created
		}
		return
	}

	// Restart: a source that restarted counts from zero since it did;
	// the others count from their value at the previous scrape.
	next := make(map[string]*source, len(ps))
	for _, p := range ps {
		cur := valueOf(p)
		src := s.sources[p.Source]
		n := &source{last: cur, created: p.Created}
		if src != nil {
			n.exemplars = src.exemplars
		}
		switch {
		case src == nil:
			// A new source we know nothing about: count it from now
			// on rather than claim its past for this interval.
			n.base = cur
			n.quietExemplars = true
		case restarted(src, p):
			n.base = value{}
		default:
			n.base = src.last
		}
		next[strings.Clone(p.Source)] = n
	}
	s.sources = next
	s.start = s.lastSeen
	if allRestarted && !math.IsInf(restartAt, 1) {
		if at := unixFloat(restartAt); at.Before(now) {
			s.start = at
		}
	}
	// Leave a gap of at least a nanosecond between the last point of the
	// old run and the start of the new one.
	if !s.start.After(s.lastSeen) {
		s.start = s.lastSeen.Add(time.Nanosecond)
	}
}

// restarted reports whether a source's counters went back to zero since the
// last scrape: a lower value or count, a lower bucket, different bounds, or
// a later _created.
func restarted(src *source, p *normalize.Point) bool {
	if p.Created > 0 && src.created > 0 && p.Created > src.created+1e-3 {
		return true
	}
	if p.Kind != normalize.KindHistogram {
		return p.Value < src.last.v
	}
	h, last := p.Hist, src.last.h
	if h.Count < last.Count || (h.HasSum && last.HasSum && h.Sum < last.Sum) || !slices.Equal(h.Bounds, last.Bounds) {
		return true
	}
	for i := range h.Counts {
		if h.Counts[i] < last.Counts[i] {
			return true
		}
	}
	return false
}

func valueOf(p *normalize.Point) value {
	if p.Kind == normalize.KindHistogram {
		return value{h: p.Hist}
	}
	return value{v: p.Value}
}

// total is the sum over sources of (current - base).
func (s *series) total(ps []*normalize.Point, kind normalize.Kind) value {
	var out value
	if kind == normalize.KindHistogram {
		out.h.Bounds = ps[0].Hist.Bounds
		out.h.Counts = make([]uint64, len(ps[0].Hist.Counts))
		out.h.HasSum = true
	}
	for _, p := range ps {
		base := s.sources[p.Source].base
		if kind != normalize.KindHistogram {
			out.v += p.Value - base.v
			continue
		}
		h := &p.Hist
		out.h.HasSum = out.h.HasSum && h.HasSum
		out.h.Sum += h.Sum - base.h.Sum
		out.h.Count += h.Count - base.h.Count
		for i := range h.Counts {
			var b uint64
			if i < len(base.h.Counts) {
				b = base.h.Counts[i]
			}
			out.h.Counts[i] += h.Counts[i] - b
		}
	}
	if !out.h.HasSum {
		out.h.Sum = 0
	}
	return out
}
