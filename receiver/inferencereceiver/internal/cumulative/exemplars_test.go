package cumulative

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

func withExemplars(p normalize.Point, xs ...normalize.Exemplar) normalize.Point {
	p.Exemplars = xs
	return p
}

// ex is an exemplar observed sec seconds after t0.
func ex(bucket float64, trace byte, sec int64) normalize.Exemplar {
	return normalize.Exemplar{Bucket: bucket, Value: bucket / 2, Timestamp: t0.UnixMilli() + sec*1000, HasTimestamp: true,
		TraceID: [16]byte{trace}, SpanID: [8]byte{trace}}
}

func noTimestamp(e normalize.Exemplar) normalize.Exemplar {
	e.Timestamp, e.HasTimestamp = 0, false
	return e
}

// createdAt gives a point the _created of a source started an hour before t0.
func createdAt(p normalize.Point) normalize.Point {
	p.Created = unix(t0.Add(-time.Hour))
	return p
}

func traces(o Output) []byte {
	var out []byte
	for _, e := range o.Exemplars {
		out = append(out, e.TraceID[0])
	}
	return out
}

// A bucket's exemplar is emitted with the scrape it first appears in, per
// source; the same exemplar again is not; one a restart took away and that
// comes back is new again.
func TestExemplarsOnlyWhenNew(t *testing.T) {
	tr := New()
	b := []float64{0.1, 1}
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }
	h := func(source string, counts []uint64, sum float64, xs ...normalize.Exemplar) normalize.Point {
		return withExemplars(createdAt(hist(source, b, counts, sum)), xs...)
	}

	o := one(t, tr, at(0), []normalize.Point{
		h("e0", []uint64{1, 0, 0}, 0.05, noTimestamp(ex(0.1, 'a', -1))),
		h("e1", []uint64{1, 0, 0}, 0.05, ex(0.1, 'b', -1)),
	})
	assert.Equal(t, []byte("ab"), traces(o), "the first scrape, started at _created: all, of every source")

	o = one(t, tr, at(1), []normalize.Point{
		h("e0", []uint64{1, 1, 0}, 0.6, noTimestamp(ex(0.1, 'a', -1)), ex(1, 'c', 2)),
		h("e1", []uint64{1, 0, 0}, 0.05, ex(0.1, 'b', -1)),
	})
	assert.Equal(t, []byte("c"), traces(o), "only the bucket whose exemplar changed")

	o = one(t, tr, at(2), []normalize.Point{
		h("e0", []uint64{1, 1, 0}, 0.6, noTimestamp(ex(0.1, 'a', -1)), ex(1, 'c', 2)),
		h("e1", []uint64{1, 0, 0}, 0.05, ex(0.1, 'a', 20)),
	})
	assert.Equal(t, []byte("a"), traces(o), "sources are told apart: e1's bucket got a's trace")

	o = one(t, tr, at(3), []normalize.Point{
		h("e0", []uint64{1, 1, 0}, 0.6, noTimestamp(ex(0.1, 'a', -1)), ex(1, 'c', 40)),
		h("e1", []uint64{1, 0, 0}, 0.05, ex(0.1, 'a', 20)),
	})
	assert.Equal(t, []byte("c"), traces(o), "a new observation with the same trace (a later timestamp) is new")

	// e0 restarts: counts from zero, its exemplars gone.
	o = one(t, tr, at(4), []normalize.Point{
		createdAt(hist("e0", b, []uint64{0, 0, 0}, 0)),
		h("e1", []uint64{1, 0, 0}, 0.05, ex(0.1, 'a', 20)),
	})
	assert.Empty(t, o.Exemplars)
	assert.True(t, o.Start.After(at(3)), "the restart starts the series again")
	o = one(t, tr, at(5), []normalize.Point{
		h("e0", []uint64{1, 0, 0}, 0.05, noTimestamp(ex(0.1, 'a', -1))),
		h("e1", []uint64{1, 0, 0}, 0.05, ex(0.1, 'a', 20)),
	})
	assert.Equal(t, []byte("a"), traces(o), "after the restart e0's exemplar is new, e1's still not")
}

// A source that appears on a known series is counted from now on; what it
// already serves was observed before the series' new start and is not
// emitted, only what it serves later.
func TestExemplarsOfAnAppearingSource(t *testing.T) {
	tr := New()
	b := []float64{0.1, 1}
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }

	one(t, tr, at(0), []normalize.Point{createdAt(hist("e0", b, []uint64{1, 0, 0}, 0.05))})
	o := one(t, tr, at(1), []normalize.Point{
		createdAt(hist("e0", b, []uint64{1, 0, 0}, 0.05)),
		withExemplars(createdAt(hist("e1", b, []uint64{5, 2, 0}, 1.5)), ex(0.1, 'a', 16), noTimestamp(ex(1, 'b', 0))),
	})
	assert.Zero(t, o.Hist.Count, "the series starts again, e1's counts left out")
	assert.Empty(t, traces(o), "and so are the exemplars it already served, even one observed after the start")

	o = one(t, tr, at(2), []normalize.Point{
		createdAt(hist("e0", b, []uint64{1, 0, 0}, 0.05)),
		withExemplars(createdAt(hist("e1", b, []uint64{6, 3, 0}, 2.1)), ex(0.1, 'a', 16), ex(1, 'c', 40)),
	})
	assert.Equal(t, []byte("c"), traces(o), "its later exemplars are new")
}

// A first scrape without _created starts the series at the point's own time:
// nothing the page serves belongs to that empty span. The next scrape emits
// what changed.
func TestExemplarsFirstScrapeWithoutCreated(t *testing.T) {
	tr := New()
	b := []float64{0.1, 1}
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }

	o := one(t, tr, at(0), []normalize.Point{
		withExemplars(hist("e0", b, []uint64{1, 1, 0}, 0.6), ex(0.1, 'a', -5), noTimestamp(ex(1, 'b', 0))),
		withExemplars(hist("e1", b, []uint64{1, 0, 0}, 0.05), ex(0.1, 'c', 0)),
	})
	assert.Equal(t, at(0), o.Start)
	assert.Empty(t, traces(o), "none, with or without a timestamp")

	o = one(t, tr, at(1), []normalize.Point{
		withExemplars(hist("e0", b, []uint64{1, 2, 0}, 1.2), ex(0.1, 'a', -5), ex(1, 'd', 10)),
		withExemplars(hist("e1", b, []uint64{1, 0, 0}, 0.05), ex(0.1, 'c', 0)),
	})
	assert.Equal(t, []byte("d"), traces(o))
}

// An exemplar observed before the point's start is not emitted, even when
// its bucket is new (a _created later than the exemplar: the client keeps
// an exemplar across a reset of its values).
func TestExemplarsBeforeStart(t *testing.T) {
	b := []float64{0.1, 1}
	p := hist("e0", b, []uint64{1, 1, 0}, 0.6)
	p.Created = unix(t0.Add(-time.Minute))
	p = withExemplars(p, ex(0.1, 'a', -61), ex(1, 'b', -60), noTimestamp(ex(0.1, 'c', 0)))
	p.Exemplars[2].Bucket = math.Inf(1)
	o := one(t, New(), t0, []normalize.Point{p})
	assert.Equal(t, []byte("bc"), traces(o), "a is from before _created; b at it; c has no timestamp")
}
