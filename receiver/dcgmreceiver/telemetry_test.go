package dcgmreceiver

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadatatest"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/nvmltest"
)

// withTelemetry sends the receiver's own metrics to a test meter provider.
func withTelemetry(t *testing.T) (*componenttest.Telemetry, func(*receiver.Settings)) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	return tt, func(s *receiver.Settings) { s.MeterProvider = tt.NewTelemetrySettings().MeterProvider }
}

func failedScrapes(source string, n int64) []metricdata.DataPoint[int64] {
	return []metricdata.DataPoint[int64]{{Value: n, Attributes: attribute.NewSet(attribute.String("source", source))}}
}

func TestScrapesWithoutNVMLAreCountedAsFailed(t *testing.T) {
	tt, opt := withTelemetry(t)
	w := testWorld(t, nil)
	w.nvml = openNVML
	cfg := manualConfig()
	cfg.LibraryPath = "/nonexistent/libnvidia-ml.so.1"
	h := start(t, cfg, w, opt)
	for range 3 {
		h.scrape(t)
	}
	metadatatest.AssertEqualReceiverDcgmScrapesFailed(t, tt, failedScrapes("nvml", 3),
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func TestScrapesOfAnUnreachableExporterAreCountedAsFailed(t *testing.T) {
	tt, opt := withTelemetry(t)
	srv := httptest.NewServer(nil)
	url := srv.URL + "/metrics"
	srv.Close() // nothing listens there
	h := start(t, exporterConfig(url), testWorld(t, nil), opt)
	for range 3 {
		h.scrape(t) // one refused, then skipped by the backoff: all without data
	}
	metadatatest.AssertEqualReceiverDcgmScrapesFailed(t, tt, failedScrapes("dcgm_exporter", 3),
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func TestGoodScrapesAreNotCounted(t *testing.T) {
	tt, opt := withTelemetry(t)
	f, err := nvmltest.New(nvmltest.Options{Model: "h100"})
	require.NoError(t, err)
	h := start(t, manualConfig(), testWorld(t, f), opt)
	h.waitNVML(t)
	require.Positive(t, h.scrape(t).DataPointCount())
	_, err = tt.GetMetric("otelcol_receiver_dcgm_scrapes_failed")
	assert.Error(t, err, "nothing recorded")
}
