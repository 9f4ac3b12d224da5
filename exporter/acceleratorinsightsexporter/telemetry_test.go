package acceleratorinsightsexporter

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/metadatatest"
)

// The console's own metrics: requests by endpoint and code, the view built
// by the request that found none, the series the model holds and what
// became of the points fed to it.
func TestConsoleTelemetry(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	c := startConsoleWith(t, testConfig(), nil, "telemetry", metadatatest.NewSettings(tt))
	t.Cleanup(func() { c.stop(t) })
	c.feed(t, fixture.Now)
	c.get(t, "/api/v1/fleet")
	c.get(t, "/api/v1/fleet")
	resp, _ := c.get(t, "/api/v1/device?id=no-such-device")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = c.get(t, "/api/v1/nothing-here")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = c.post(t, "/api/v1/findings/f-0/dismiss", map[string]string{csrfHeader: c.token}, "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	req := func(endpoint string, code int, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(attribute.String("endpoint", endpoint), attribute.Int("code", code))}
	}
	metadatatest.AssertEqualExporterInsightsAPIRequests(t, tt, []metricdata.DataPoint[int64]{
		req("/api/v1/session", 200, 1), // startConsole reads the CSRF token
		req("/api/v1/fleet", 200, 2),
		req("/api/v1/device", 404, 1),
		req("other", 404, 1),
		req("/api/v1/findings/{id}/{action}", 404, 1),
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())

	// One view, built by the first /fleet request.
	m, err := tt.GetMetric("otelcol_exporter_insights_view_rebuild_duration")
	require.NoError(t, err)
	h := m.Data.(metricdata.Histogram[float64])
	require.Len(t, h.DataPoints, 1)
	require.Equal(t, uint64(1), h.DataPoints[0].Count)
	trigger, _ := h.DataPoints[0].Attributes.Value("trigger")
	require.Equal(t, triggerRequest, trigger.AsString())

	metadatatest.AssertEqualExporterInsightsSeries(t, tt, []metricdata.DataPoint[int64]{{Value: int64(c.e.mem.SeriesHeld())}},
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
	require.Positive(t, c.e.mem.SeriesHeld())

	// Three batches of the fixture: every point modelled or ignored.
	total := int64(3 * fixture.Metrics(fixture.Now).DataPointCount())
	m, err = tt.GetMetric("otelcol_exporter_insights_points")
	require.NoError(t, err)
	var sum int64
	outcomes := map[string]int64{}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		o, _ := dp.Attributes.Value("outcome")
		outcomes[o.AsString()] = dp.Value
		sum += dp.Value
	}
	require.Equal(t, total, sum, "every point is counted once: %v", outcomes)
	require.Positive(t, outcomes["modelled"])
}
