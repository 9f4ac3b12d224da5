package delta

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func pts(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

// counter builds one cumulative monotonic sum point of series "gpu-0".
func counter(start, at time.Time, v float64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("hw.id", "GPU-0")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("hw.energy")
	s := m.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dp := s.DataPoints().AppendEmpty()
	if !start.IsZero() {
		dp.SetStartTimestamp(pts(start))
	}
	dp.SetTimestamp(pts(at))
	dp.SetDoubleValue(v)
	return md
}

func sumPoints(t *testing.T, md pmetric.Metrics) []pmetric.NumberDataPoint {
	t.Helper()
	var out []pmetric.NumberDataPoint
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Type() != pmetric.MetricTypeSum {
					continue
				}
				require.Equal(t, pmetric.AggregationTemporalityDelta, ms.At(k).Sum().AggregationTemporality())
				dps := ms.At(k).Sum().DataPoints()
				for l := 0; l < dps.Len(); l++ {
					out = append(out, dps.At(l))
				}
			}
		}
	}
	return out
}

// run feeds points one call at a time and returns the delta values sent.
func run(t *testing.T, c *Converter, inputs ...pmetric.Metrics) []float64 {
	t.Helper()
	var out []float64
	for _, in := range inputs {
		before := pmetric.NewMetrics()
		in.CopyTo(before)
		got, _, _ := c.Convert(in)
		assert.Equal(t, before, in, "Convert must not modify its input")
		for _, dp := range sumPoints(t, got) {
			out = append(out, dp.DoubleValue())
		}
	}
	return out
}

func TestFirstPointPolicies(t *testing.T) {
	clk := &clock{now: t0}
	before, after := t0.Add(-time.Hour), t0.Add(time.Second)

	c := New(Options{FirstPoint: FirstPointStartTime, Now: clk.Now})
	assert.Equal(t, []float64{5}, run(t, c, counter(after, t0.Add(10*time.Second), 5)),
		"a series that started after the converter sends its first value")
	c = New(Options{FirstPoint: FirstPointStartTime, Now: clk.Now})
	assert.Empty(t, run(t, c, counter(before, t0.Add(10*time.Second), 5)),
		"a series older than the converter may have been counted by a previous process: baseline")
	c = New(Options{FirstPoint: FirstPointStartTime, Now: clk.Now})
	assert.Empty(t, run(t, c, counter(time.Time{}, t0.Add(10*time.Second), 5)), "no start time: baseline")

	c = New(Options{FirstPoint: FirstPointBaseline, Now: clk.Now})
	assert.Empty(t, run(t, c, counter(after, t0.Add(10*time.Second), 5)))

	c = New(Options{FirstPoint: FirstPointEmit, Now: clk.Now})
	assert.Equal(t, []float64{5}, run(t, c, counter(before, t0.Add(10*time.Second), 5)))
}

func TestDeltasResetsAndDuplicates(t *testing.T) {
	clk := &clock{now: t0}
	c := New(Options{FirstPoint: FirstPointBaseline, Now: clk.Now})
	s := t0.Add(-time.Hour)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	got := run(t, c,
		counter(s, at(10), 100),     // baseline
		counter(s, at(20), 130),     // +30
		counter(s, at(20), 130),     // duplicate
		counter(s, at(15), 120),     // out of order
		counter(s, at(30), 130),     // +0
		counter(s, at(40), 7),       // decrease: reset inside the interval, 7 since the reset
		counter(s, at(50), 10),      // +3
		counter(at(55), at(60), 4),  // new start after the last point: restarted, 4 since
		counter(at(45), at(70), 9),  // start moved back before the last point: ambiguous, baseline
		counter(at(45), at(80), 12), // +3
	)
	assert.Equal(t, []float64{30, 0, 7, 3, 4, 3}, got)
}

func TestDeltaStartTimestamps(t *testing.T) {
	c := New(Options{FirstPoint: FirstPointBaseline, Now: (&clock{now: t0}).Now})
	s := t0.Add(-time.Hour)
	c.Convert(counter(s, t0.Add(10*time.Second), 1))
	out, _, st := c.Convert(counter(s, t0.Add(20*time.Second), 3))
	dps := sumPoints(t, out)
	require.Len(t, dps, 1)
	assert.Equal(t, pts(t0.Add(10*time.Second)), dps[0].StartTimestamp(), "a delta starts where the last point ended")
	assert.Equal(t, Stats{Converted: 1}, st)
}

func TestIntCountersStayInts(t *testing.T) {
	c := New(Options{FirstPoint: FirstPointBaseline, Now: (&clock{now: t0}).Now})
	mk := func(sec int, v int64) pmetric.Metrics {
		md := counter(t0.Add(-time.Hour), t0.Add(time.Duration(sec)*time.Second), 0)
		md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Sum().DataPoints().At(0).SetIntValue(v)
		return md
	}
	c.Convert(mk(10, 1000))
	out, _, _ := c.Convert(mk(20, 1042))
	dps := sumPoints(t, out)
	require.Len(t, dps, 1)
	assert.Equal(t, pmetric.NumberDataPointValueTypeInt, dps[0].ValueType())
	assert.Equal(t, int64(42), dps[0].IntValue())
}

func TestLevelsAndDeltasPassUntouched(t *testing.T) {
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	m := sm.Metrics().AppendEmpty()
	m.SetName("hw.gpu.memory.usage")
	s := m.SetEmptySum()
	s.SetIsMonotonic(false)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	s.DataPoints().AppendEmpty().SetIntValue(5)
	g := sm.Metrics().AppendEmpty()
	g.SetName("hw.power")
	g.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(300)

	c := New(Options{Now: (&clock{now: t0}).Now})
	out, undo, _ := c.Convert(md)
	assert.Nil(t, undo)
	assert.Equal(t, md, out, "nothing cumulative and monotonic: returned as is, not copied")
	assert.Zero(t, c.Len())
}

func TestUndoRestoresState(t *testing.T) {
	c := New(Options{FirstPoint: FirstPointBaseline, Now: (&clock{now: t0}).Now})
	s := t0.Add(-time.Hour)
	c.Convert(counter(s, t0.Add(10*time.Second), 100))
	_, undo, _ := c.Convert(counter(s, t0.Add(20*time.Second), 150))
	undo.Apply() // the queue refused the batch; the sender will offer it again
	assert.Equal(t, []float64{50}, run(t, c, counter(s, t0.Add(20*time.Second), 150)),
		"after Undo the retried point is a delta again, not a duplicate")

	c2 := New(Options{FirstPoint: FirstPointBaseline, Now: (&clock{now: t0}).Now})
	_, undo1, _ := c2.Convert(counter(s, t0.Add(10*time.Second), 100))
	c2.Convert(counter(s, t0.Add(20*time.Second), 150))
	undo1.Apply() // superseded by the later call: nothing to restore
	assert.Equal(t, []float64{10}, run(t, c2, counter(s, t0.Add(30*time.Second), 160)))
}

func TestSeriesExpireAfterTTL(t *testing.T) {
	clk := &clock{now: t0}
	c := New(Options{FirstPoint: FirstPointBaseline, TTL: 10 * time.Minute, Now: clk.Now})
	c.Convert(counter(t0, t0.Add(time.Second), 1))
	assert.Equal(t, 1, c.Len())
	clk.now = t0.Add(5 * time.Minute)
	c.Convert(pmetric.NewMetrics())
	assert.Equal(t, 1, c.Len())
	clk.now = t0.Add(11 * time.Minute)
	md := counter(t0, t0.Add(time.Second), 1)
	md.ResourceMetrics().At(0).Resource().Attributes().PutStr("hw.id", "GPU-1")
	c.Convert(md)
	assert.Equal(t, 1, c.Len(), "GPU-0 was forgotten, GPU-1 is new")
}

func histogram(start, at time.Time, bounds []float64, counts []uint64, sum, lo, hi float64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("gen_ai.server.time_to_first_token")
	h := m.SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dp := h.DataPoints().AppendEmpty()
	dp.SetStartTimestamp(pts(start))
	dp.SetTimestamp(pts(at))
	dp.ExplicitBounds().FromRaw(bounds)
	dp.BucketCounts().FromRaw(counts)
	var n uint64
	for _, c := range counts {
		n += c
	}
	dp.SetCount(n)
	dp.SetSum(sum)
	dp.SetMin(lo)
	dp.SetMax(hi)
	return md
}

func histPoint(t *testing.T, md pmetric.Metrics) pmetric.HistogramDataPoint {
	m := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0)
	require.Equal(t, pmetric.AggregationTemporalityDelta, m.Histogram().AggregationTemporality())
	require.Equal(t, 1, m.Histogram().DataPoints().Len())
	return m.Histogram().DataPoints().At(0)
}

func TestCumulativeHistograms(t *testing.T) {
	c := New(Options{FirstPoint: FirstPointBaseline, Now: (&clock{now: t0}).Now})
	s := t0.Add(-time.Hour)
	b := []float64{0.1, 0.5, 1}
	out, _, _ := c.Convert(histogram(s, t0.Add(10*time.Second), b, []uint64{1, 2, 3, 0}, 5, 0.05, 0.9))
	assert.Zero(t, out.DataPointCount(), "baseline")

	out, _, _ = c.Convert(histogram(s, t0.Add(20*time.Second), b, []uint64{1, 5, 3, 2}, 9, 0.05, 3))
	dp := histPoint(t, out)
	assert.Equal(t, []uint64{0, 3, 0, 2}, dp.BucketCounts().AsRaw())
	assert.Equal(t, uint64(5), dp.Count())
	assert.InDelta(t, 4, dp.Sum(), 1e-12)
	assert.False(t, dp.HasMin(), "the cumulative min did not move: this interval's min is unknown")
	assert.True(t, dp.HasMax(), "the cumulative max grew: this interval held it")
	assert.Equal(t, 3.0, dp.Max())

	out, _, st := c.Convert(histogram(s, t0.Add(30*time.Second), b, []uint64{0, 1, 0, 0}, 0.2, 0.2, 0.2))
	dp = histPoint(t, out)
	assert.Equal(t, 1, st.Resets)
	assert.Equal(t, []uint64{0, 1, 0, 0}, dp.BucketCounts().AsRaw(), "a reset sends the new value whole")
	assert.True(t, dp.HasMin())

	out, _, st = c.Convert(histogram(s, t0.Add(40*time.Second), []float64{1, 2}, []uint64{1, 1, 1}, 3, 0.5, 2.5))
	assert.Zero(t, out.DataPointCount())
	assert.Equal(t, 1, st.Baselines, "changed bounds cannot be subtracted: new baseline")
}

func expHistogram(at time.Time, scale int32, offset int32, counts []uint64, zero uint64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("gen_ai.server.request.duration")
	h := m.SetEmptyExponentialHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dp := h.DataPoints().AppendEmpty()
	dp.SetStartTimestamp(pts(t0.Add(-time.Hour)))
	dp.SetTimestamp(pts(at))
	dp.SetScale(scale)
	dp.SetZeroCount(zero)
	dp.Positive().SetOffset(offset)
	dp.Positive().BucketCounts().FromRaw(counts)
	n := zero
	for _, c := range counts {
		n += c
	}
	dp.SetCount(n)
	return md
}

func TestCumulativeExponentialHistogramsAcrossScaleChanges(t *testing.T) {
	c := New(Options{FirstPoint: FirstPointBaseline, Now: (&clock{now: t0}).Now})
	// Scale 3, buckets 8..11; then the SDK downscales to 2 as the range grows.
	c.Convert(expHistogram(t0.Add(10*time.Second), 3, 8, []uint64{1, 1, 1, 1}, 1))
	out, _, _ := c.Convert(expHistogram(t0.Add(20*time.Second), 2, 4, []uint64{3, 4, 0, 0, 1}, 2))
	m := out.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0)
	dp := m.ExponentialHistogram().DataPoints().At(0)
	assert.Equal(t, int32(2), dp.Scale())
	// At scale 2 the old buckets 8,9 → 4 and 10,11 → 5: {4:2, 5:2}.
	assert.Equal(t, int32(4), dp.Positive().Offset())
	assert.Equal(t, []uint64{1, 2, 0, 0, 1}, dp.Positive().BucketCounts().AsRaw())
	assert.Equal(t, uint64(1), dp.ZeroCount())
	assert.Equal(t, uint64(5), dp.Count())
}

func TestExpBuckets(t *testing.T) {
	b := expBuckets{offset: -3, counts: []uint64{1, 2, 3, 4}} // indexes -3..0
	d := b.downscale(1)
	assert.Equal(t, expBuckets{offset: -2, counts: []uint64{1, 5, 4}}, d, "-3→-2, -2,-1→-1, 0→0")

	r, ok := subtract(expBuckets{offset: 0, counts: []uint64{5, 5}}, expBuckets{offset: 1, counts: []uint64{2}})
	assert.True(t, ok)
	assert.Equal(t, expBuckets{offset: 0, counts: []uint64{5, 3}}, r)
	_, ok = subtract(expBuckets{offset: 0, counts: []uint64{5}}, expBuckets{offset: 1, counts: []uint64{2}})
	assert.False(t, ok, "a bucket the new point lacks held counts: reset")
}

func TestSummaries(t *testing.T) {
	c := New(Options{FirstPoint: FirstPointBaseline, Now: (&clock{now: t0}).Now})
	mk := func(sec int, n uint64, sum float64) pmetric.Metrics {
		md := pmetric.NewMetrics()
		m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("rpc.duration")
		dp := m.SetEmptySummary().DataPoints().AppendEmpty()
		dp.SetStartTimestamp(pts(t0.Add(-time.Hour)))
		dp.SetTimestamp(pts(t0.Add(time.Duration(sec) * time.Second)))
		dp.SetCount(n)
		dp.SetSum(sum)
		return md
	}
	c.Convert(mk(10, 10, 5))
	out, _, _ := c.Convert(mk(20, 14, 7))
	dp := out.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Summary().DataPoints().At(0)
	assert.Equal(t, uint64(4), dp.Count())
	assert.InDelta(t, 2, dp.Sum(), 1e-12)
}

func TestSeriesAreKeyedByResourceAndAttributes(t *testing.T) {
	c := New(Options{FirstPoint: FirstPointBaseline, Now: (&clock{now: t0}).Now})
	s := t0.Add(-time.Hour)
	a := counter(s, t0.Add(10*time.Second), 100)
	b := counter(s, t0.Add(10*time.Second), 500)
	b.ResourceMetrics().At(0).Resource().Attributes().PutStr("hw.id", "GPU-1")
	cc := counter(s, t0.Add(10*time.Second), 900)
	cc.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Sum().DataPoints().At(0).Attributes().PutStr("error.type", "xid")
	run(t, c, a, b, cc)
	assert.Equal(t, 3, c.Len())
	a2 := counter(s, t0.Add(20*time.Second), 101)
	b2 := counter(s, t0.Add(20*time.Second), 502)
	b2.ResourceMetrics().At(0).Resource().Attributes().PutStr("hw.id", "GPU-1")
	assert.Equal(t, []float64{1, 2}, run(t, c, a2, b2))
}

// ConvertInPlace must turn the same inputs into the same deltas as Convert,
// and keep the same series state.
func TestConvertInPlaceMatchesConvert(t *testing.T) {
	s := t0.Add(-time.Minute)
	copying, inPlace := New(Options{}), New(Options{})
	for i, v := range []float64{5, 7, 7, 12, 3, 9} {
		in := counter(s, t0.Add(time.Duration(i)*10*time.Second), v)
		want, _, wantSt := copying.Convert(in)
		undo, st := inPlace.ConvertInPlace(in)
		assert.Equal(t, want, in, "point %d", i)
		assert.Equal(t, wantSt, st, "point %d", i)
		assert.NotNil(t, undo)
	}
	assert.Equal(t, copying.Len(), inPlace.Len())
	gauge := pmetric.NewMetrics()
	gauge.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(1)
	undo, _ := inPlace.ConvertInPlace(gauge)
	assert.Nil(t, undo, "nothing cumulative: nothing to undo")
}
