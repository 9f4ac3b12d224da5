package normalize

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
)

func TestExemplarsOnHistogramBuckets(t *testing.T) {
	pg := promscrape.ParseOptions{OpenMetrics: true}.Parse(`# TYPE nv_inference_first_response_histogram_ms histogram
nv_inference_first_response_histogram_ms_bucket{model="m",version="1",le="100"} 3 # {trace_id="4bf92f3577b34da6a3ce929d0e0e4736",span_id="00f067aa0ba902b7",tenant="t1"} 42.5 1767225686.5
nv_inference_first_response_histogram_ms_bucket{model="m",version="1",le="+Inf"} 4 # {trace_id="00000000000000000000000000000000"} 900
nv_inference_first_response_histogram_ms_count{model="m",version="1"} 4
nv_inference_first_response_histogram_ms_sum{model="m",version="1"} 1200
# TYPE nv_inference_request_success counter
nv_inference_request_success_total{model="m",version="1"} 4 # {trace_id="4bf92f3577b34da6a3ce929d0e0e4736"} 1
# EOF
`)
	require.Zero(t, pg.Errors.Count+pg.ExemplarErrors.Count, "%v %v", pg.Errors.First, pg.ExemplarErrors.First)
	r := NormalizePage(Triton, &pg, "")
	require.Empty(t, r.Errors)
	ttft := find(t, r, "gen_ai.server.time_to_first_token", "")
	require.Len(t, ttft, 1)
	xs := ttft[0].Exemplars
	require.Len(t, xs, 2)

	assert.Equal(t, 0.1, xs[0].Bucket, "in seconds, as the histogram")
	assert.Equal(t, 0.0425, xs[0].Value)
	assert.Equal(t, int64(1767225686500), xs[0].Timestamp)
	assert.Equal(t, [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}, xs[0].TraceID)
	assert.Equal(t, [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}, xs[0].SpanID)
	assert.Equal(t, []promscrape.Label[string]{{Name: "tenant", Value: "t1"}}, xs[0].Filtered)

	assert.True(t, xs[1].Bucket > 1e300, "+Inf")
	assert.Equal(t, [16]byte{}, xs[1].TraceID, "an all-zero trace id is no trace")
	assert.Equal(t, []promscrape.Label[string]{{Name: "trace_id", Value: "00000000000000000000000000000000"}}, xs[1].Filtered)
	require.Len(t, r.ExemplarErrors, 1)
	assert.Contains(t, r.ExemplarErrors[0].Error(), "line 3")

	for _, p := range r.Points {
		if p.Kind != KindHistogram {
			assert.Empty(t, p.Exemplars, "%s: only histograms carry exemplars", p.Metric)
		}
	}
	for _, p := range Normalize(Triton, pg.Samples, "").Points {
		assert.Empty(t, p.Exemplars, "Normalize of the samples alone reads no exemplars")
	}
}
