package cumulative

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

var t0 = time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func counter(source string, v, created float64) normalize.Point {
	return normalize.Point{Model: "m", Metric: "gen_ai.server.tokens", Kind: normalize.KindCounter,
		AttrKey: "gen_ai.token.type", AttrValue: "input", Source: source, Value: v, Created: created}
}

func hist(source string, bounds []float64, counts []uint64, sum float64) normalize.Point {
	var n uint64
	for _, c := range counts {
		n += c
	}
	return normalize.Point{Model: "m", Metric: "gen_ai.server.time_to_first_token", Kind: normalize.KindHistogram,
		Source: source, Hist: normalize.Histogram{Bounds: bounds, Counts: counts, Count: n, Sum: sum, HasSum: true}}
}

func one(t *testing.T, tr *Tracker, now time.Time, points []normalize.Point) Output {
	t.Helper()
	outs, errs := tr.Update(now, points)
	require.Empty(t, errs)
	require.Len(t, outs, 1)
	return outs[0]
}

func TestFirstStart(t *testing.T) {
	created := t0.Add(-time.Hour)
	tests := []struct {
		name   string
		points []normalize.Point
		want   time.Time
	}{
		{"from _created", []normalize.Point{counter("e0", 5, unix(created))}, created},
		{"earliest of sources", []normalize.Point{counter("e0", 5, unix(created)), counter("e1", 5, unix(created.Add(time.Minute)))}, created},
		{"unknown: the point's own time", []normalize.Point{counter("e0", 5, 0)}, t0},
		{"one source unknown", []normalize.Point{counter("e0", 5, unix(created)), counter("e1", 5, 0)}, t0},
		{"_created in the future", []normalize.Point{counter("e0", 5, unix(t0.Add(time.Hour)))}, t0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := one(t, New(), t0, tt.points)
			assert.WithinDuration(t, tt.want, o.Start, 0)
			assert.Equal(t, t0, o.Time)
			assert.False(t, o.HasDelta)
		})
	}
}

func TestCounterContinues(t *testing.T) {
	tr := New()
	one(t, tr, t0, []normalize.Point{counter("e0", 100, 0), counter("e1", 50, 0)})
	o := one(t, tr, t0.Add(15*time.Second), []normalize.Point{counter("e0", 130, 0), counter("e1", 55, 0)})
	assert.Equal(t, 185.0, o.Value)
	assert.Equal(t, t0, o.Start)
	assert.True(t, o.HasDelta)
	assert.Equal(t, 35.0, o.Delta)
}

func TestSingleSourceReset(t *testing.T) {
	tr := New()
	one(t, tr, t0, []normalize.Point{counter("", 1000, 0)})
	t1 := t0.Add(15 * time.Second)
	o := one(t, tr, t1, []normalize.Point{counter("", 40, 0)})
	assert.Equal(t, 40.0, o.Value, "the server's own value: counted since the restart")
	assert.Equal(t, t0.Add(time.Nanosecond), o.Start, "restart happened after the previous scrape")
	assert.Equal(t, 40.0, o.Delta)

	o = one(t, tr, t1.Add(15*time.Second), []normalize.Point{counter("", 70, 0)})
	assert.Equal(t, t0.Add(time.Nanosecond), o.Start)
	assert.Equal(t, 30.0, o.Delta)
}

func TestResetByCreatedEvenIfValueGrew(t *testing.T) {
	created := t0.Add(-time.Hour)
	restart := t0.Add(5 * time.Second)
	tr := New()
	one(t, tr, t0, []normalize.Point{counter("", 10, unix(created))})
	o := one(t, tr, t0.Add(15*time.Second), []normalize.Point{counter("", 25, unix(restart))})
	assert.WithinDuration(t, restart, o.Start, 0)
	assert.Equal(t, 25.0, o.Value)
	assert.Equal(t, 25.0, o.Delta)
}

// One engine of two restarts: the series starts again at the previous
// scrape; the other engine's previous value becomes its base.
func TestPartialReset(t *testing.T) {
	tr := New()
	one(t, tr, t0, []normalize.Point{counter("e0", 1000, 0), counter("e1", 800, 0)})
	t1 := t0.Add(15 * time.Second)
	o := one(t, tr, t1, []normalize.Point{counter("e0", 1100, 0), counter("e1", 30, 0)})
	assert.Equal(t, 130.0, o.Value, "(1100-1000) + 30")
	assert.Equal(t, t0.Add(time.Nanosecond), o.Start)
	assert.Equal(t, 130.0, o.Delta)

	o = one(t, tr, t1.Add(15*time.Second), []normalize.Point{counter("e0", 1150, 0), counter("e1", 45, 0)})
	assert.Equal(t, 195.0, o.Value, "bases stay until the next reset")
	assert.Equal(t, 65.0, o.Delta)
}

func TestSourceVanishesAndAppears(t *testing.T) {
	tr := New()
	one(t, tr, t0, []normalize.Point{counter("e0", 1000, 0), counter("e1", 800, 0)})
	t1 := t0.Add(15 * time.Second)
	o := one(t, tr, t1, []normalize.Point{counter("e0", 1010, 0)})
	assert.Equal(t, 10.0, o.Value, "the vanished engine's count does not turn into a drop")
	assert.Equal(t, t0.Add(time.Nanosecond), o.Start)

	t2 := t1.Add(15 * time.Second)
	o = one(t, tr, t2, []normalize.Point{counter("e0", 1020, 0), counter("e2", 500, 0)})
	assert.Equal(t, 10.0, o.Value, "a new engine counts from now on, not its past")
	assert.Equal(t, t1.Add(time.Nanosecond), o.Start)

	o = one(t, tr, t2.Add(15*time.Second), []normalize.Point{counter("e0", 1030, 0), counter("e2", 520, 0)})
	assert.Equal(t, 40.0, o.Value)
	assert.Equal(t, 30.0, o.Delta)
}

func TestHistogramReset(t *testing.T) {
	b := []float64{0.1, 1}
	tr := New()
	one(t, tr, t0, []normalize.Point{hist("e0", b, []uint64{5, 3, 1}, 4), hist("e1", b, []uint64{2, 2, 0}, 2)})
	t1 := t0.Add(15 * time.Second)
	// e1 restarted: a bucket went down although its total grew.
	o := one(t, tr, t1, []normalize.Point{hist("e0", b, []uint64{6, 3, 1}, 4.05), hist("e1", b, []uint64{1, 4, 0}, 3)})
	assert.Equal(t, t0.Add(time.Nanosecond), o.Start)
	assert.Equal(t, []uint64{2, 4, 0}, o.Hist.Counts)
	assert.Equal(t, uint64(6), o.Hist.Count)
	assert.InDelta(t, 3.05, o.Hist.Sum, 1e-9)
	assert.Equal(t, b, o.Hist.Bounds)

	// Bounds change (server restarted with custom buckets): a reset too.
	nb := []float64{0.5}
	o = one(t, tr, t1.Add(15*time.Second), []normalize.Point{hist("e0", nb, []uint64{1, 0}, 0.2), hist("e1", nb, []uint64{0, 1}, 0.9)})
	assert.Equal(t, nb, o.Hist.Bounds)
	assert.Equal(t, []uint64{1, 1}, o.Hist.Counts)
	assert.Equal(t, t1.Add(time.Nanosecond), o.Start)
}

func TestMismatchedBoundsLeftOut(t *testing.T) {
	outs, errs := New().Update(t0, []normalize.Point{
		hist("e0", []float64{0.1, 1}, []uint64{1, 1, 1}, 1),
		hist("e1", []float64{0.2, 1}, []uint64{1, 1, 1}, 1),
	})
	require.Len(t, outs, 1)
	assert.Equal(t, uint64(3), outs[0].Hist.Count)
	require.Len(t, errs, 1)
	assert.EqualError(t, errs[0], `gen_ai.server.time_to_first_token for model "m": source {e1} has bucket bounds [0.2 1], unlike {e0}'s [0.1 1]; left out`)
}

func TestGaugesAggregate(t *testing.T) {
	g := func(metric string, agg normalize.Agg, source string, v float64) normalize.Point {
		return normalize.Point{Model: "m", Metric: metric, Kind: normalize.KindGauge, Agg: agg, Source: source, Value: v}
	}
	outs, errs := New().Update(t0, []normalize.Point{
		g("gen_ai.server.requests.running", normalize.AggSum, "e0", 3),
		g("gen_ai.server.kv_cache.utilization", normalize.AggMean, "e0", 0.2),
		g("gen_ai.server.requests.running", normalize.AggSum, "e1", 4),
		g("gen_ai.server.kv_cache.utilization", normalize.AggMean, "e1", 0.6),
	})
	require.Empty(t, errs)
	require.Len(t, outs, 2)
	assert.Equal(t, "gen_ai.server.kv_cache.utilization", outs[0].Metric, "sorted by metric")
	assert.InDelta(t, 0.4, outs[0].Value, 1e-12)
	assert.Equal(t, 7.0, outs[1].Value)
	assert.True(t, outs[1].Start.IsZero())
}

func TestAbsentSeriesForgotten(t *testing.T) {
	tr := New()
	one(t, tr, t0, []normalize.Point{counter("", 100, 0)})
	outs, _ := tr.Update(t0.Add(15*time.Second), nil)
	assert.Empty(t, outs)
	assert.Zero(t, tr.Len())
	o := one(t, tr, t0.Add(30*time.Second), []normalize.Point{counter("", 120, 0)})
	assert.Equal(t, t0.Add(30*time.Second), o.Start, "a series that comes back starts anew")
	assert.False(t, o.HasDelta)
}

// TestRandomRestartsNeverGoBackwards drives engines that restart at random
// (dropping to a lower value) and checks what a consumer computes: within one start time the series
// never decreases, and its increase is exactly what the engines counted.
func TestRandomRestartsNeverGoBackwards(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		tr := New()
		engines := 1 + rng.IntN(4)
		vals := make([]float64, engines)
		for i := range vals {
			vals[i] = float64(rng.IntN(1000))
		}
		now := t0
		var prev Output
		var truth float64 // increments the engines made since the last scrape
		for step := range 50 {
			points := make([]normalize.Point, 0, engines)
			for e := range engines {
				points = append(points, counter(string(rune('a'+e)), vals[e], 0))
			}
			o := one(t, tr, now, points)
			if step > 0 {
				require.True(t, o.HasDelta)
				if o.Start.Equal(prev.Start) {
					require.GreaterOrEqual(t, o.Value, prev.Value, "run %d step %d", run, step)
				}
				require.InDelta(t, truth, o.Delta, 1e-9, "run %d step %d", run, step)
				require.True(t, o.Start.After(prev.Time) || o.Start.Equal(prev.Start), "run %d step %d", run, step)
			}
			prev, truth = o, 0
			for e := range vals {
				// A restart is visible only if the value drops (these
				// sources have no _created); one that does not drop
				// cannot be told from growth by anyone.
				if rng.IntN(10) == 0 && vals[e] > 0 {
					vals[e] = float64(rng.IntN(int(min(vals[e], 5)))) // restarted, counted a little
					truth += vals[e]
				} else {
					inc := float64(rng.IntN(100))
					vals[e] += inc
					truth += inc
				}
			}
			now = now.Add(15 * time.Second)
		}
	}
}
