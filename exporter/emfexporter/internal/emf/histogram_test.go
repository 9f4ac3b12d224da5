package emf

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

func explicit(bounds []float64, counts []uint64, sum float64, minmax ...float64) pmetric.HistogramDataPoint {
	dp := pmetric.NewHistogramDataPoint()
	dp.ExplicitBounds().FromRaw(bounds)
	dp.BucketCounts().FromRaw(counts)
	var n uint64
	for _, c := range counts {
		n += c
	}
	dp.SetCount(n)
	dp.SetSum(sum)
	if len(minmax) == 2 {
		dp.SetMin(minmax[0])
		dp.SetMax(minmax[1])
	}
	return dp
}

func TestExplicitBucketsBecomeMidpoints(t *testing.T) {
	// (-Inf,1] (1,2] (2,4] (4,+Inf)
	d, err := FromExplicit(explicit([]float64{1, 2, 4}, []uint64{2, 3, 0, 1}, 9))
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 1.5, 4}, d.Values, "no min: first bucket at its bound; no max: +Inf bucket at the last bound")
	assert.Equal(t, []float64{2, 3, 1}, d.Counts)
	assert.Equal(t, Distribution{Values: d.Values, Counts: d.Counts, Min: 1, Max: 4, Sum: 9, Count: 6}, d)

	d, err = FromExplicit(explicit([]float64{1, 2, 4}, []uint64{2, 3, 0, 1}, 9, 0.5, 10))
	require.NoError(t, err)
	assert.Equal(t, []float64{0.75, 1.5, 7}, d.Values, "min and max close the open buckets")
	assert.Equal(t, 0.5, d.Min)
	assert.Equal(t, 10.0, d.Max)

	// Min 1.8 lies in (1,2]: the bucket is really (1.8,2], values stay in [min,max].
	d, err = FromExplicit(explicit([]float64{1, 2, 4}, []uint64{0, 3, 1, 0}, 8, 1.8, 2.5))
	require.NoError(t, err)
	assert.Equal(t, []float64{1.9, 2.25}, d.Values)

	// Clamping can merge buckets: values are listed once.
	d, err = FromExplicit(explicit([]float64{1, 2, 4}, []uint64{0, 3, 1, 0}, 6, 2, 2))
	require.NoError(t, err)
	assert.Equal(t, []float64{2}, d.Values)
	assert.Equal(t, []float64{4}, d.Counts)
}

func TestBucketlessHistogramIsItsMean(t *testing.T) {
	dp := pmetric.NewHistogramDataPoint()
	dp.SetCount(4)
	dp.SetSum(10)
	d, err := FromExplicit(dp)
	require.NoError(t, err)
	assert.Equal(t, Distribution{Values: []float64{2.5}, Counts: []float64{4}, Min: 2.5, Max: 2.5, Sum: 10, Count: 4}, d)
}

func TestMalformedHistograms(t *testing.T) {
	for name, dp := range map[string]pmetric.HistogramDataPoint{
		"counts do not match bounds": explicit([]float64{1, 2}, []uint64{1, 1}, 1),
		"bounds not increasing":      explicit([]float64{2, 1}, []uint64{1, 1, 1}, 1),
		"infinite bound":             explicit([]float64{1, math.Inf(1)}, []uint64{1, 1, 1}, 1),
		"NaN sum":                    explicit([]float64{1}, []uint64{1, 1}, math.NaN()),
		"min above max":              explicit([]float64{1}, []uint64{1, 1}, 1, 5, 2),
	} {
		_, err := FromExplicit(dp)
		assert.Error(t, err, name)
	}
	_, err := FromExplicit(explicit([]float64{1}, []uint64{0, 0}, 0))
	assert.ErrorIs(t, err, errNoObservations)
}

func TestExponentialMidpoints(t *testing.T) {
	dp := pmetric.NewExponentialHistogramDataPoint()
	dp.SetScale(0) // base 2: bucket i is (2^i, 2^(i+1)]
	dp.Positive().SetOffset(1)
	dp.Positive().BucketCounts().FromRaw([]uint64{1, 0, 2}) // (2,4] and (8,16]
	dp.Negative().SetOffset(0)
	dp.Negative().BucketCounts().FromRaw([]uint64{3}) // [-2,-1)
	dp.SetZeroCount(1)
	dp.SetCount(7)
	dp.SetSum(20)
	d, err := FromExponential(dp)
	require.NoError(t, err)
	assert.Equal(t, []float64{-1.5, 0, 3, 12}, d.Values)
	assert.Equal(t, []float64{3, 1, 1, 2}, d.Counts)
	assert.Equal(t, 7.0, d.Count)
	assert.Equal(t, 20.0, d.Sum)
}

// TestSplitKeepsTheDistribution checks the invariants of Split on random
// distributions: totals preserved, pieces ordered, each piece's Min and Max
// bracket its values.
func TestSplitKeepsTheDistribution(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		n := 1 + r.IntN(450)
		var d Distribution
		v := -50 + r.Float64()
		for i := 0; i < n; i++ {
			v += 0.01 + r.Float64()
			d.add(v, float64(1+r.IntN(20)))
		}
		lim := limits{min: d.Values[0] - r.Float64(), max: d.Values[n-1] + r.Float64(), hasMin: true, hasMax: true}
		d, err := d.finish(lim, true, 1000*r.NormFloat64())
		require.NoError(t, err)
		pieces := d.Split(MaxValuesPerArray)
		assert.Len(t, pieces, (n+MaxValuesPerArray-1)/MaxValuesPerArray)
		var count, sum float64
		values := 0
		for i, p := range pieces {
			assert.LessOrEqual(t, len(p.Values), MaxValuesPerArray)
			assert.LessOrEqual(t, p.Min, p.Values[0])
			assert.GreaterOrEqual(t, p.Max, p.Values[len(p.Values)-1])
			if i > 0 {
				assert.Less(t, pieces[i-1].Values[len(pieces[i-1].Values)-1], p.Values[0])
			}
			count += p.Count
			sum += p.Sum
			values += len(p.Values)
		}
		assert.Equal(t, n, values)
		assert.Equal(t, d.Count, count)
		assert.InDelta(t, d.Sum, sum, 1e-6*math.Max(1, math.Abs(d.Sum)))
		assert.Equal(t, d.Min, pieces[0].Min)
		assert.Equal(t, d.Max, pieces[len(pieces)-1].Max)
	}
}

func TestSummaryIsAStatisticSet(t *testing.T) {
	dp := pmetric.NewSummaryDataPoint()
	dp.SetCount(10)
	dp.SetSum(30)
	q := dp.QuantileValues().AppendEmpty()
	q.SetQuantile(0)
	q.SetValue(1)
	q = dp.QuantileValues().AppendEmpty()
	q.SetQuantile(0.5)
	q.SetValue(2.5)
	d, err := FromSummary(dp)
	require.NoError(t, err)
	assert.Equal(t, Distribution{Min: 1, Max: 3, Sum: 30, Count: 10}, d, "no quantile 1: max is the mean")
}
