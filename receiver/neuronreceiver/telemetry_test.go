package neuronreceiver

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// withTelemetry sends the receiver's own metrics to tt.
func withTelemetry(t *testing.T) (*componenttest.Telemetry, func(*receiver.Settings)) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	return tt, func(s *receiver.Settings) { s.MeterProvider = tt.NewTelemetrySettings().MeterProvider }
}

func counter(t *testing.T, tt *componenttest.Telemetry, name string) int64 {
	t.Helper()
	m, err := tt.GetMetric(name)
	if err != nil {
		return 0 // never recorded
	}
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		n += dp.Value
	}
	return n
}

func TestRestartsAreCounted(t *testing.T) {
	tt, opt := withTelemetry(t)
	h := newHarness(t, subprocessConfig(t, "inf2.json", "--exit-after", "1", "--exit-code", "3"), opt)
	h.waitForReports(3)
	h.stop()
	exits := 0
	for _, e := range h.host.errors() {
		if strings.Contains(e, "exited after") {
			exits++
		}
	}
	require.GreaterOrEqual(t, exits, 2)
	assert.Equal(t, int64(exits), counter(t, tt, "otelcol_receiver_neuron_monitor_restarts"), "one per exit, each exit one status event")
	assert.Zero(t, counter(t, tt, "otelcol_receiver_neuron_scrapes_failed"), "every report was read")
}

func TestFailedScrapesAreCounted(t *testing.T) {
	tt, opt := withTelemetry(t)
	e := newExporter(t, 5, promFixture(t, "inf2-1.prom"))
	h := newHarness(t, prometheusConfig(e.URL), opt)
	h.waitForReports(1)
	h.stop()
	assert.Equal(t, int64(5), counter(t, tt, "otelcol_receiver_neuron_scrapes_failed"), "the five 503s")
	assert.Zero(t, counter(t, tt, "otelcol_receiver_neuron_monitor_restarts"))
}

func TestUndecodableReportsAreCountedAsFailedScrapes(t *testing.T) {
	tt, opt := withTelemetry(t)
	h := newHarness(t, subprocessConfig(t, "trn2.json", "--malformed-every", "3", "--truncate-every", "4"), opt)
	h.waitForReports(6)
	h.stop()
	assert.GreaterOrEqual(t, counter(t, tt, "otelcol_receiver_neuron_scrapes_failed"), int64(2), "report #3 malformed, #4 truncated")
}
