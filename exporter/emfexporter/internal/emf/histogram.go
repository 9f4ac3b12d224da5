package emf

import (
	"fmt"
	"math"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Distribution is the content of an EMF histogram value object:
// {"Values":[…],"Counts":[…],"Max":…,"Min":…,"Count":…,"Sum":…}.
// Values are ascending and unique; Counts[i] observations fell at Values[i].
type Distribution struct {
	Values []float64
	Counts []float64
	Min    float64
	Max    float64
	Sum    float64
	Count  float64
}

// errNoObservations marks a histogram point with a count of zero: there is
// nothing to send for its interval, which is not an error.
var errNoObservations = fmt.Errorf("no observations")

// FromExplicit turns an explicit-bucket histogram point into a distribution.
//
// Each non-empty bucket (lo, hi] is represented by its midpoint. The open
// first bucket (-Inf, b0] uses the midpoint of [min, b0] when the point has a
// min, else b0; the open last bucket (bN, +Inf) uses the midpoint of
// [bN, max] when the point has a max, else bN. Every value is clamped into
// [min, max] when those are known, so Min <= Values <= Max always holds.
// A point with no buckets at all (sum and count only) becomes one value, its
// mean.
func FromExplicit(dp pmetric.HistogramDataPoint) (Distribution, error) {
	bounds := dp.ExplicitBounds()
	counts := dp.BucketCounts()
	lim, err := limitsOf(dp.HasMin(), dp.Min(), dp.HasMax(), dp.Max())
	if err != nil {
		return Distribution{}, err
	}
	if dp.HasSum() && !finite(dp.Sum()) {
		return Distribution{}, fmt.Errorf("sum is %v", dp.Sum())
	}
	if counts.Len() == 0 {
		return meanOnly(dp.Count(), dp.HasSum(), dp.Sum(), lim)
	}
	if counts.Len() != bounds.Len()+1 {
		return Distribution{}, fmt.Errorf("%d bucket counts for %d explicit bounds (want bounds+1)", counts.Len(), bounds.Len())
	}
	for i := 0; i < bounds.Len(); i++ {
		b := bounds.At(i)
		if !finite(b) {
			return Distribution{}, fmt.Errorf("explicit bound %d is %v", i, b)
		}
		if i > 0 && b <= bounds.At(i-1) {
			return Distribution{}, fmt.Errorf("explicit bounds not strictly increasing at index %d (%v after %v)", i, b, bounds.At(i-1))
		}
	}
	var d Distribution
	n := bounds.Len()
	for i := 0; i < counts.Len(); i++ {
		c := counts.At(i)
		if c == 0 {
			continue
		}
		var lo, hi float64
		loOK, hiOK := i > 0, i < n
		if loOK {
			lo = bounds.At(i - 1)
		}
		if hiOK {
			hi = bounds.At(i)
		}
		d.add(lim.clamp(representative(lo, loOK, hi, hiOK, lim)), float64(c))
	}
	return d.finish(lim, dp.HasSum(), dp.Sum())
}

// FromExponential turns an exponential histogram point into a distribution:
// each non-empty bucket is represented by the midpoint of its bounds, the zero
// bucket by 0, negative buckets by the negated midpoint.
func FromExponential(dp pmetric.ExponentialHistogramDataPoint) (Distribution, error) {
	lim, err := limitsOf(dp.HasMin(), dp.Min(), dp.HasMax(), dp.Max())
	if err != nil {
		return Distribution{}, err
	}
	if dp.HasSum() && !finite(dp.Sum()) {
		return Distribution{}, fmt.Errorf("sum is %v", dp.Sum())
	}
	scale := int(dp.Scale())
	if scale < -10 || scale > 20 {
		return Distribution{}, fmt.Errorf("scale %d outside [-10, 20]", scale)
	}
	var d Distribution
	neg := dp.Negative()
	for j := neg.BucketCounts().Len() - 1; j >= 0; j-- {
		c := neg.BucketCounts().At(j)
		if c == 0 {
			continue
		}
		mid, err := expMidpoint(int(neg.Offset())+j, scale)
		if err != nil {
			return Distribution{}, err
		}
		d.add(lim.clamp(-mid), float64(c))
	}
	if zc := dp.ZeroCount(); zc > 0 {
		d.add(lim.clamp(0), float64(zc))
	}
	pos := dp.Positive()
	for j := 0; j < pos.BucketCounts().Len(); j++ {
		c := pos.BucketCounts().At(j)
		if c == 0 {
			continue
		}
		mid, err := expMidpoint(int(pos.Offset())+j, scale)
		if err != nil {
			return Distribution{}, err
		}
		d.add(lim.clamp(mid), float64(c))
	}
	if len(d.Values) == 0 && dp.Count() > 0 {
		return meanOnly(dp.Count(), dp.HasSum(), dp.Sum(), lim)
	}
	return d.finish(lim, dp.HasSum(), dp.Sum())
}

// expMidpoint is the midpoint of bucket index (base^idx, base^(idx+1)] with
// base = 2^(2^-scale).
func expMidpoint(idx, scale int) (float64, error) {
	lo := math.Exp2(math.Ldexp(float64(idx), -scale))
	hi := math.Exp2(math.Ldexp(float64(idx+1), -scale))
	mid := lo/2 + hi/2
	if !finite(mid) || mid > maxMagnitude {
		return 0, fmt.Errorf("bucket %d at scale %d is beyond the range CloudWatch accepts", idx, scale)
	}
	return mid, nil
}

func meanOnly(count uint64, hasSum bool, sum float64, lim limits) (Distribution, error) {
	if count == 0 {
		return Distribution{}, errNoObservations
	}
	var mean float64
	switch {
	case hasSum:
		mean = sum / float64(count)
	case lim.hasMin && lim.hasMax:
		mean = lim.min/2 + lim.max/2
	default:
		return Distribution{}, fmt.Errorf("count %d with neither buckets nor sum", count)
	}
	var d Distribution
	d.add(lim.clamp(mean), float64(count))
	return d.finish(lim, hasSum, sum)
}

// representative picks the value that stands for the bucket (lo, hi].
func representative(lo float64, loOK bool, hi float64, hiOK bool, lim limits) float64 {
	if lim.hasMin && (!loOK || lo < lim.min) {
		lo, loOK = lim.min, true
	}
	if lim.hasMax && (!hiOK || hi > lim.max) {
		hi, hiOK = lim.max, true
	}
	switch {
	case loOK && hiOK:
		return lo/2 + hi/2
	case hiOK:
		return hi
	default:
		return lo
	}
}

type limits struct {
	min, max       float64
	hasMin, hasMax bool
}

func limitsOf(hasMin bool, lo float64, hasMax bool, hi float64) (limits, error) {
	if hasMin && (!finite(lo) || math.Abs(lo) > maxMagnitude) {
		return limits{}, fmt.Errorf("min %v is beyond the range CloudWatch accepts", lo)
	}
	if hasMax && (!finite(hi) || math.Abs(hi) > maxMagnitude) {
		return limits{}, fmt.Errorf("max %v is beyond the range CloudWatch accepts", hi)
	}
	if hasMin && hasMax && lo > hi {
		return limits{}, fmt.Errorf("min %v greater than max %v", lo, hi)
	}
	return limits{min: lo, max: hi, hasMin: hasMin, hasMax: hasMax}, nil
}

func (l limits) clamp(v float64) float64 {
	if l.hasMin && v < l.min {
		v = l.min
	}
	if l.hasMax && v > l.max {
		v = l.max
	}
	return v
}

// add appends a value, merging it with the previous one when clamping made
// them equal: CloudWatch expects each value once in Values.
func (d *Distribution) add(v, c float64) {
	if n := len(d.Values); n > 0 && d.Values[n-1] == v {
		d.Counts[n-1] += c
		return
	}
	d.Values = append(d.Values, v)
	d.Counts = append(d.Counts, c)
}

func (d Distribution) finish(lim limits, hasSum bool, sum float64) (Distribution, error) {
	if len(d.Values) == 0 {
		return Distribution{}, errNoObservations
	}
	est := 0.0
	for i, v := range d.Values {
		d.Count += d.Counts[i]
		est += v * d.Counts[i]
	}
	d.Min, d.Max = d.Values[0], d.Values[len(d.Values)-1]
	if lim.hasMin {
		d.Min = lim.min
	}
	if lim.hasMax {
		d.Max = lim.max
	}
	d.Sum = est
	if hasSum {
		d.Sum = sum
	}
	if !finite(d.Sum) || math.Abs(d.Sum) > maxMagnitude {
		return Distribution{}, fmt.Errorf("sum %v is beyond the range CloudWatch accepts", d.Sum)
	}
	return d, nil
}

// Split cuts a distribution with more than maxValues values into consecutive
// pieces of at most maxValues values. Each piece keeps its share: counts add up to
// Count, sums add up to Sum (each piece gets its estimated sum plus a
// count-weighted share of the difference between the true and estimated
// sum), the first piece keeps Min and the last keeps Max, and every piece's
// Min and Max bracket its own values.
func (d Distribution) Split(maxValues int) []Distribution {
	if len(d.Values) <= maxValues {
		return []Distribution{d}
	}
	pieces := make([]Distribution, 0, (len(d.Values)+maxValues-1)/maxValues)
	est := 0.0
	for start := 0; start < len(d.Values); start += maxValues {
		end := min(start+maxValues, len(d.Values))
		p := Distribution{Values: d.Values[start:end], Counts: d.Counts[start:end]}
		for i, v := range p.Values {
			p.Count += p.Counts[i]
			p.Sum += v * p.Counts[i]
		}
		est += p.Sum
		p.Min, p.Max = p.Values[0], p.Values[len(p.Values)-1]
		pieces = append(pieces, p)
	}
	pieces[0].Min = d.Min
	pieces[len(pieces)-1].Max = d.Max
	correction := d.Sum - est
	if d.Count > 0 {
		for i := range pieces {
			pieces[i].Sum += correction * pieces[i].Count / d.Count
		}
	}
	return pieces
}

// maxMagnitude is the largest absolute value CloudWatch accepts (2^360).
var maxMagnitude = math.Ldexp(1, 360)

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// FromSummary turns a summary point into a statistic set (Values and Counts
// omitted): Min and Max come from the 0 and 1 quantiles when the point has
// them, else from the mean.
func FromSummary(dp pmetric.SummaryDataPoint) (Distribution, error) {
	if dp.Count() == 0 {
		return Distribution{}, errNoObservations
	}
	if !finite(dp.Sum()) || math.Abs(dp.Sum()) > maxMagnitude {
		return Distribution{}, fmt.Errorf("sum is %v", dp.Sum())
	}
	mean := dp.Sum() / float64(dp.Count())
	d := Distribution{Count: float64(dp.Count()), Sum: dp.Sum(), Min: mean, Max: mean}
	qs := dp.QuantileValues()
	hasQ0, hasQ1 := false, false
	for i := 0; i < qs.Len(); i++ {
		q := qs.At(i)
		if !finite(q.Value()) || math.Abs(q.Value()) > maxMagnitude {
			return Distribution{}, fmt.Errorf("quantile %v is %v, beyond the range CloudWatch accepts", q.Quantile(), q.Value())
		}
		switch q.Quantile() {
		case 0:
			d.Min, hasQ0 = q.Value(), true
		case 1:
			d.Max, hasQ1 = q.Value(), true
		}
	}
	switch {
	case !hasQ1 && d.Max < d.Min:
		d.Max = d.Min
	case !hasQ0 && d.Min > d.Max:
		d.Min = d.Max
	}
	if d.Min > d.Max {
		return Distribution{}, fmt.Errorf("quantile 0 (%v) greater than quantile 1 (%v)", d.Min, d.Max)
	}
	return d, nil
}
