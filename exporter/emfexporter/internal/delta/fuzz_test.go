package delta

import (
	"bytes"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// FuzzConvert feeds arbitrary OTLP metrics, twice, through one converter:
// it must never panic, never modify its input, never emit more points than
// it got, and leave nothing cumulative behind but non-monotonic sums.
func FuzzConvert(f *testing.F) {
	for _, md := range []pmetric.Metrics{
		counter(t0, t0.Add(time.Second), 5),
		histogram(t0, t0.Add(time.Second), []float64{1, 2}, []uint64{1, 2, 3}, 4, 0.5, 3),
		expHistogram(t0.Add(time.Second), 3, -2, []uint64{1, 0, 4}, 2),
	} {
		b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, b)
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		c := New(Options{FirstPoint: FirstPointEmit, TTL: time.Minute})
		for _, data := range [][]byte{first, second} {
			md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(data)
			if err != nil {
				continue
			}
			before, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
			out, _, _ := c.Convert(md)
			if out.DataPointCount() > md.DataPointCount() {
				t.Fatalf("%d points out of %d in", out.DataPointCount(), md.DataPointCount())
			}
			if after, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md); !bytes.Equal(before, after) {
				t.Fatal("input modified")
			}
			if hasCumulative(out) && out.DataPointCount() > 0 {
				// Only summaries (converted in place) may remain "cumulative".
				for i := 0; i < out.ResourceMetrics().Len(); i++ {
					for j := 0; j < out.ResourceMetrics().At(i).ScopeMetrics().Len(); j++ {
						ms := out.ResourceMetrics().At(i).ScopeMetrics().At(j).Metrics()
						for k := 0; k < ms.Len(); k++ {
							m := ms.At(k)
							if m.Type() == pmetric.MetricTypeHistogram && m.Histogram().AggregationTemporality() == pmetric.AggregationTemporalityCumulative {
								t.Fatal("cumulative histogram left")
							}
						}
					}
				}
			}
		}
	})
}
