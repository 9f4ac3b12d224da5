package emfexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/metadatatest"
	"github.com/otelcol-accel/otelcol-accel/internal/cwlogstest"
)

func TestSplitEventsAreCounted(t *testing.T) {
	isolateAWS(t)
	srv := cwlogstest.New("us-east-1", verifySignatures)
	defer srv.Close()
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	exp, err := NewFactory().CreateMetrics(context.Background(), metadatatest.NewSettings(tt), testConfig(srv))
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))

	at := time.Now().Truncate(time.Second)
	require.NoError(t, exp.ConsumeMetrics(context.Background(), nodeMetrics("node-a", at, 250, 0))) // three events
	require.NoError(t, exp.ConsumeMetrics(context.Background(), nodeMetrics("node-b", at, 3, 0)))   // one
	require.Eventually(t, func() bool { return len(srv.AllEvents()) == 4 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))

	metadatatest.AssertEqualExporterEmfEventsSplit(t, tt, []metricdata.DataPoint[int64]{{Value: 2}},
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func TestRejectedEventsAreCountedByReason(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	e, err := newEMFExporter(cfg, metadatatest.NewSettings(tt))
	require.NoError(t, err)

	// What the CloudWatch Logs sink calls with PutLogEvents'
	// rejectedLogEventsInfo.
	e.Rejected("/g", "s", 2, 0, 5)
	e.Rejected("/g", "s", 1, 0, 0)

	metadatatest.AssertEqualExporterEmfEventsRejected(t, tt, []metricdata.DataPoint[int64]{
		{Value: 3, Attributes: attribute.NewSet(attribute.String("reason", "too_new"))},
		{Value: 5, Attributes: attribute.NewSet(attribute.String("reason", "expired"))},
	}, metricdatatest.IgnoreTimestamp())
}
