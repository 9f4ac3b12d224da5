// Package delta turns cumulative metrics into deltas, which is what
// CloudWatch aggregates: monotonic cumulative sums, cumulative histograms
// (explicit and exponential) and summaries (count and sum).
//
// State is kept per series, keyed by resource, scope, metric name and type,
// and data point attributes, and forgotten after a TTL without points.
//
// How a series' first point is handled is configurable (FirstPoint). Later
// points:
//   - an older or equal timestamp than the last point is a duplicate and is
//     dropped (its value was already accounted for);
//   - a changed start time that is at or after the last point's time is a
//     restart seen from its beginning: the new value is the delta;
//   - a changed start time before that overlaps what was already counted:
//     the point becomes the new baseline;
//   - a value (or count, or any bucket) lower than the last one is a reset
//     within the interval: the new value is the delta;
//   - histograms whose bounds changed (or exponential ones whose zero
//     threshold changed) cannot be subtracted: the point becomes the new
//     baseline unless the start time says it restarted;
//   - otherwise the delta is the difference, starting at the last point.
//
// Non-monotonic cumulative sums (up-down counters: memory in use, device
// state) are levels, not accumulations, and are left as they are.
package delta

import (
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/attrhash"
)

// FirstPoint says what becomes of the first point seen of a series.
type FirstPoint string

const (
	// FirstPointStartTime sends the first point's value as its first delta
	// when the point has a start time at or after the converter was created:
	// the series began while this process was watching, so no earlier
	// process can have sent any of it. Otherwise the point is the baseline.
	FirstPointStartTime FirstPoint = "start_time"
	// FirstPointBaseline always keeps the first point as a baseline only.
	FirstPointBaseline FirstPoint = "baseline"
	// FirstPointEmit always sends the first point's value as a delta. After
	// a collector restart that double-counts what the previous process sent.
	FirstPointEmit FirstPoint = "emit"
)

// Options configure a Converter.
type Options struct {
	FirstPoint FirstPoint
	// TTL after which a series without points is forgotten.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Stats counts what happened to cumulative points in one call.
type Stats struct {
	Converted  int // points sent on as deltas
	Baselines  int // points kept only as baselines
	Resets     int // resets detected (the new value sent as the delta)
	Duplicates int // points not newer than the last one of their series
}

// Converter holds the per-series state. It is safe for concurrent use.
type Converter struct {
	opts      Options
	now       func() time.Time
	startedAt pcommon.Timestamp

	mu        sync.Mutex
	series    map[key]*state
	lastSweep time.Time
}

type key struct {
	resource uint64
	scope    uint64
	attrs    uint64
	name     string
	typ      pmetric.MetricType
}

// state is the last cumulative point of a series. A state is never changed
// once stored, only replaced, so Undo can tell whether it is still current.
type state struct {
	start, last pcommon.Timestamp
	seen        time.Time

	isInt  bool
	intVal int64
	dblVal float64

	count          uint64
	sum            float64
	hasMin, hasMax bool
	min, max       float64
	bounds         []float64
	buckets        []uint64

	scale         int32
	zeroCount     uint64
	zeroThreshold float64
	pos, neg      expBuckets
}

// New returns a converter; its "process start" for FirstPointStartTime is
// now.
func New(opts Options) *Converter {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if opts.FirstPoint == "" {
		opts.FirstPoint = FirstPointStartTime
	}
	t := now()
	return &Converter{
		opts:      opts,
		now:       now,
		startedAt: pcommon.NewTimestampFromTime(t),
		series:    map[key]*state{},
		lastSweep: t,
	}
}

// Len is the number of series held.
func (c *Converter) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.series)
}

// Undo reverts the state changes of one Convert call, for when its result
// could not be handed on (the sending queue was full): the sender will offer
// the same cumulative points again and they must not look like duplicates.
type Undo struct {
	c       *Converter
	changes []change
}

type change struct {
	k         key
	prev, cur *state
}

// Apply reverts the changes that no later call has superseded.
func (u *Undo) Apply() {
	if u == nil {
		return
	}
	u.c.mu.Lock()
	defer u.c.mu.Unlock()
	for i := len(u.changes) - 1; i >= 0; i-- {
		ch := u.changes[i]
		if u.c.series[ch.k] != ch.cur {
			continue
		}
		if ch.prev == nil {
			delete(u.c.series, ch.k)
		} else {
			u.c.series[ch.k] = ch.prev
		}
	}
}

// Convert returns md with its cumulative data turned into deltas; md itself is
// never modified. When md holds nothing cumulative it is returned as is, with
// a nil Undo.
func (c *Converter) Convert(md pmetric.Metrics) (pmetric.Metrics, *Undo, Stats) {
	var st Stats
	if !hasCumulative(md) {
		return md, nil, st
	}
	out := pmetric.NewMetrics()
	md.CopyTo(out)
	undo, st := c.convert(out)
	return out, undo, st
}

// ConvertInPlace turns md's cumulative data into deltas in md itself, for
// a caller that owns md (a consumer declaring MutatesData): the copy
// Convert makes is the largest part of its cost. The Undo is nil when md
// holds nothing cumulative.
func (c *Converter) ConvertInPlace(md pmetric.Metrics) (*Undo, Stats) {
	if !hasCumulative(md) {
		return nil, Stats{}
	}
	return c.convert(md)
}

func (c *Converter) convert(out pmetric.Metrics) (*Undo, Stats) {
	var st Stats
	undo := &Undo{c: c}

	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.sweep(now)
	rms := out.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		rk := attrhash.Map(rm.Resource().Attributes())
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			sm := sms.At(j)
			sk := attrhash.String(sm.Scope().Name()+"\x00"+sm.Scope().Version()) ^ attrhash.Map(sm.Scope().Attributes())
			sm.Metrics().RemoveIf(func(m pmetric.Metric) bool {
				base := key{resource: rk, scope: sk, name: m.Name(), typ: m.Type()}
				p := pass{c: c, base: base, now: now, undo: undo, st: &st}
				switch m.Type() {
				case pmetric.MetricTypeSum:
					s := m.Sum()
					if !s.IsMonotonic() || s.AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
						return false
					}
					s.DataPoints().RemoveIf(p.sum)
					s.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
					return s.DataPoints().Len() == 0
				case pmetric.MetricTypeHistogram:
					h := m.Histogram()
					if h.AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
						return false
					}
					h.DataPoints().RemoveIf(p.histogram)
					h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
					return h.DataPoints().Len() == 0
				case pmetric.MetricTypeExponentialHistogram:
					h := m.ExponentialHistogram()
					if h.AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
						return false
					}
					h.DataPoints().RemoveIf(p.exponential)
					h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
					return h.DataPoints().Len() == 0
				case pmetric.MetricTypeSummary:
					m.Summary().DataPoints().RemoveIf(p.summary)
					return m.Summary().DataPoints().Len() == 0
				}
				return false
			})
		}
	}
	return undo, st
}

// hasCumulative reports whether md holds anything Convert would change.
func hasCumulative(md pmetric.Metrics) bool {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				switch m.Type() {
				case pmetric.MetricTypeSum:
					if m.Sum().IsMonotonic() && m.Sum().AggregationTemporality() == pmetric.AggregationTemporalityCumulative {
						return true
					}
				case pmetric.MetricTypeHistogram:
					if m.Histogram().AggregationTemporality() == pmetric.AggregationTemporalityCumulative {
						return true
					}
				case pmetric.MetricTypeExponentialHistogram:
					if m.ExponentialHistogram().AggregationTemporality() == pmetric.AggregationTemporalityCumulative {
						return true
					}
				case pmetric.MetricTypeSummary:
					return true
				}
			}
		}
	}
	return false
}

// sweep forgets series not seen for the TTL. It runs at most every TTL/2.
func (c *Converter) sweep(now time.Time) {
	if c.opts.TTL <= 0 || now.Sub(c.lastSweep) < c.opts.TTL/2 {
		return
	}
	c.lastSweep = now
	for k, s := range c.series {
		if now.Sub(s.seen) > c.opts.TTL {
			delete(c.series, k)
		}
	}
}

type action int

const (
	actDelta action = iota
	actValue
	actBaseline
	actDrop
)

// decide applies the rules of the package comment. subtractable is false when
// the new point cannot be subtracted from the old one (bounds changed).
func (c *Converter) decide(prev *state, start, ts pcommon.Timestamp, decreased func() bool, subtractable bool) action {
	if prev == nil {
		switch c.opts.FirstPoint {
		case FirstPointEmit:
			return actValue
		case FirstPointStartTime:
			if start != 0 && start >= c.startedAt && start < ts {
				return actValue
			}
		}
		return actBaseline
	}
	if ts <= prev.last {
		return actDrop
	}
	if start != 0 && prev.start != 0 && start != prev.start {
		if start >= prev.last {
			return actValue
		}
		return actBaseline
	}
	if !subtractable {
		return actBaseline
	}
	if decreased() {
		return actValue
	}
	return actDelta
}

// pass converts the points of one metric.
type pass struct {
	c    *Converter
	base key
	now  time.Time
	undo *Undo
	st   *Stats
}

func (p pass) lookup(attrs pcommon.Map) (key, *state) {
	k := p.base
	k.attrs = attrhash.Map(attrs)
	return k, p.c.series[k]
}

// store records the new cumulative state and what to restore on Undo.
func (p pass) store(k key, prev, cur *state) {
	cur.seen = p.now
	p.c.series[k] = cur
	p.undo.changes = append(p.undo.changes, change{k: k, prev: prev, cur: cur})
}

// account updates the statistics and says whether the point is removed.
func (p pass) account(act action) bool {
	switch act {
	case actBaseline:
		p.st.Baselines++
		return true
	case actDrop:
		p.st.Duplicates++
		return true
	}
	p.st.Converted++
	return false
}

// startOf is the start time a delta point gets.
func startOf(act action, prev *state, start pcommon.Timestamp) pcommon.Timestamp {
	if act == actDelta {
		return prev.last
	}
	if start == 0 && prev != nil {
		return prev.last
	}
	return start
}

func (p pass) sum(dp pmetric.NumberDataPoint) bool {
	if dp.Flags().NoRecordedValue() {
		return false // a staleness marker: passed on, skipped by the encoder
	}
	k, prev := p.lookup(dp.Attributes())
	cur := &state{start: dp.StartTimestamp(), last: dp.Timestamp()}
	switch dp.ValueType() {
	case pmetric.NumberDataPointValueTypeInt:
		cur.isInt, cur.intVal = true, dp.IntValue()
	case pmetric.NumberDataPointValueTypeDouble:
		cur.dblVal = dp.DoubleValue()
	default:
		return true
	}
	subtractable := prev == nil || prev.isInt == cur.isInt
	act := p.c.decide(prev, cur.start, cur.last, func() bool {
		if cur.isInt {
			return cur.intVal < prev.intVal
		}
		return cur.dblVal < prev.dblVal
	}, subtractable)
	if act == actValue && prev != nil {
		p.st.Resets++
	}
	if act != actDrop {
		p.store(k, prev, cur)
	}
	if act == actDelta {
		if cur.isInt {
			dp.SetIntValue(cur.intVal - prev.intVal)
		} else {
			dp.SetDoubleValue(cur.dblVal - prev.dblVal)
		}
	}
	if act == actDelta || act == actValue {
		dp.SetStartTimestamp(startOf(act, prev, cur.start))
	}
	return p.account(act)
}

func (p pass) histogram(dp pmetric.HistogramDataPoint) bool {
	if dp.Flags().NoRecordedValue() {
		return false
	}
	k, prev := p.lookup(dp.Attributes())
	cur := &state{
		start: dp.StartTimestamp(), last: dp.Timestamp(),
		count: dp.Count(), sum: dp.Sum(),
		hasMin: dp.HasMin(), min: dp.Min(), hasMax: dp.HasMax(), max: dp.Max(),
		bounds: dp.ExplicitBounds().AsRaw(), buckets: dp.BucketCounts().AsRaw(),
	}
	subtractable := prev == nil || (equalFloats(prev.bounds, cur.bounds) && len(prev.buckets) == len(cur.buckets))
	act := p.c.decide(prev, cur.start, cur.last, func() bool {
		if cur.count < prev.count {
			return true
		}
		for i := range cur.buckets {
			if cur.buckets[i] < prev.buckets[i] {
				return true
			}
		}
		return false
	}, subtractable)
	if act == actValue && prev != nil {
		p.st.Resets++
	}
	if act != actDrop {
		p.store(k, prev, cur)
	}
	if act == actDelta {
		dp.SetCount(cur.count - prev.count)
		if dp.HasSum() {
			dp.SetSum(cur.sum - prev.sum)
		}
		diff := make([]uint64, len(cur.buckets))
		for i := range diff {
			diff[i] = cur.buckets[i] - prev.buckets[i]
		}
		dp.BucketCounts().FromRaw(diff)
		deltaMinMax(prev, cur, dp.RemoveMin, dp.RemoveMax)
	}
	if act == actDelta || act == actValue {
		dp.SetStartTimestamp(startOf(act, prev, cur.start))
	}
	return p.account(act)
}

// deltaMinMax keeps a cumulative min (max) on a delta only when it moved in
// this interval, which proves the interval held it; otherwise the interval's
// extreme is unknown and removed.
func deltaMinMax(prev, cur *state, removeMin, removeMax func()) {
	if !(cur.hasMin && prev.hasMin && cur.min < prev.min) {
		removeMin()
	}
	if !(cur.hasMax && prev.hasMax && cur.max > prev.max) {
		removeMax()
	}
}

func (p pass) exponential(dp pmetric.ExponentialHistogramDataPoint) bool {
	if dp.Flags().NoRecordedValue() {
		return false
	}
	k, prev := p.lookup(dp.Attributes())
	cur := &state{
		start: dp.StartTimestamp(), last: dp.Timestamp(),
		count: dp.Count(), sum: dp.Sum(),
		hasMin: dp.HasMin(), min: dp.Min(), hasMax: dp.HasMax(), max: dp.Max(),
		scale: dp.Scale(), zeroCount: dp.ZeroCount(), zeroThreshold: dp.ZeroThreshold(),
		pos: expBuckets{offset: dp.Positive().Offset(), counts: dp.Positive().BucketCounts().AsRaw()},
		neg: expBuckets{offset: dp.Negative().Offset(), counts: dp.Negative().BucketCounts().AsRaw()},
	}
	subtractable := prev == nil || prev.zeroThreshold == cur.zeroThreshold
	var pos, neg expBuckets
	scale := cur.scale
	act := p.c.decide(prev, cur.start, cur.last, func() bool {
		scale = min(cur.scale, prev.scale)
		var okP, okN bool
		pos, okP = subtract(cur.pos.downscale(cur.scale-scale), prev.pos.downscale(prev.scale-scale))
		neg, okN = subtract(cur.neg.downscale(cur.scale-scale), prev.neg.downscale(prev.scale-scale))
		return !okP || !okN || cur.count < prev.count || cur.zeroCount < prev.zeroCount
	}, subtractable)
	if act == actValue && prev != nil {
		p.st.Resets++
	}
	if act != actDrop {
		p.store(k, prev, cur)
	}
	if act == actDelta {
		dp.SetCount(cur.count - prev.count)
		if dp.HasSum() {
			dp.SetSum(cur.sum - prev.sum)
		}
		dp.SetZeroCount(cur.zeroCount - prev.zeroCount)
		dp.SetScale(scale)
		dp.Positive().SetOffset(pos.offset)
		dp.Positive().BucketCounts().FromRaw(pos.counts)
		dp.Negative().SetOffset(neg.offset)
		dp.Negative().BucketCounts().FromRaw(neg.counts)
		deltaMinMax(prev, cur, dp.RemoveMin, dp.RemoveMax)
	}
	if act == actDelta || act == actValue {
		dp.SetStartTimestamp(startOf(act, prev, cur.start))
	}
	return p.account(act)
}

func (p pass) summary(dp pmetric.SummaryDataPoint) bool {
	if dp.Flags().NoRecordedValue() {
		return false
	}
	k, prev := p.lookup(dp.Attributes())
	cur := &state{start: dp.StartTimestamp(), last: dp.Timestamp(), count: dp.Count(), sum: dp.Sum()}
	act := p.c.decide(prev, cur.start, cur.last, func() bool { return cur.count < prev.count }, true)
	if act == actValue && prev != nil {
		p.st.Resets++
	}
	if act != actDrop {
		p.store(k, prev, cur)
	}
	if act == actDelta {
		dp.SetCount(cur.count - prev.count)
		dp.SetSum(cur.sum - prev.sum)
	}
	if act == actDelta || act == actValue {
		dp.SetStartTimestamp(startOf(act, prev, cur.start))
	}
	return p.account(act)
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
