package cumulative

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

func withExemplars(p normalize.Point, xs ...normalize.Exemplar) normalize.Point {
	p.Exemplars = xs
	return p
}

func ex(bucket float64, trace byte, ts int64) normalize.Exemplar {
	return normalize.Exemplar{Bucket: bucket, Value: bucket / 2, Timestamp: ts, HasTimestamp: true, TraceID: [16]byte{trace}, SpanID: [8]byte{trace}}
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

	o := one(t, tr, at(0), []normalize.Point{
		withExemplars(hist("e0", b, []uint64{1, 0, 0}, 0.05), ex(0.1, 'a', 1)),
		withExemplars(hist("e1", b, []uint64{1, 0, 0}, 0.05), ex(0.1, 'b', 1)),
	})
	assert.Equal(t, []byte("ab"), traces(o), "the first scrape: all, of every source")

	o = one(t, tr, at(1), []normalize.Point{
		withExemplars(hist("e0", b, []uint64{1, 1, 0}, 0.6), ex(0.1, 'a', 1), ex(1, 'c', 2)),
		withExemplars(hist("e1", b, []uint64{1, 0, 0}, 0.05), ex(0.1, 'b', 1)),
	})
	assert.Equal(t, []byte("c"), traces(o), "only the bucket whose exemplar changed")

	o = one(t, tr, at(2), []normalize.Point{
		withExemplars(hist("e0", b, []uint64{1, 1, 0}, 0.6), ex(0.1, 'a', 1), ex(1, 'c', 2)),
		withExemplars(hist("e1", b, []uint64{1, 0, 0}, 0.05), ex(0.1, 'a', 1)),
	})
	assert.Equal(t, []byte("a"), traces(o), "sources are told apart: e1's bucket got a's trace")

	o = one(t, tr, at(3), []normalize.Point{
		withExemplars(hist("e0", b, []uint64{1, 1, 0}, 0.6), ex(0.1, 'a', 1), ex(1, 'c', 3)),
		withExemplars(hist("e1", b, []uint64{1, 0, 0}, 0.05), ex(0.1, 'a', 1)),
	})
	assert.Equal(t, []byte("c"), traces(o), "a new observation with the same trace (a later timestamp) is new")

	// e0 restarts: counts from zero, its exemplars gone.
	o = one(t, tr, at(4), []normalize.Point{
		hist("e0", b, []uint64{0, 0, 0}, 0),
		withExemplars(hist("e1", b, []uint64{1, 0, 0}, 0.05), ex(0.1, 'a', 1)),
	})
	assert.Empty(t, o.Exemplars)
	assert.True(t, o.Start.After(at(3)), "the restart starts the series again")
	o = one(t, tr, at(5), []normalize.Point{
		withExemplars(hist("e0", b, []uint64{1, 0, 0}, 0.05), ex(0.1, 'a', 1)),
		withExemplars(hist("e1", b, []uint64{1, 0, 0}, 0.05), ex(0.1, 'a', 1)),
	})
	assert.Equal(t, []byte("a"), traces(o), "after the restart e0's exemplar is new, e1's still not")
}
