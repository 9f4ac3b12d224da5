package mapping

import (
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/neuronmonitor"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/promreport"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/report"
)

// The same simulated node read both ways, neuron-monitor's JSON stream and
// neuron-monitor-prometheus.py's page fed by that stream, gives the same
// resources and metrics, report after report, once the JSON output is
// stripped of what the page does not carry.
func TestBothInputsGiveTheSameMetrics(t *testing.T) {
	for _, tc := range []struct {
		node  string
		fleet func(testing.TB) *fleet.Fleet
	}{
		{"neuron-trn2-a", func(tb testing.TB) *fleet.Fleet { return simtest.Trn2Fleet(tb) }},
		{"neuron-inf2-a", func(tb testing.TB) *fleet.Fleet { return simtest.DemoFleet(tb, 0) }},
	} {
		t.Run(tc.node, func(t *testing.T) {
			f := tc.fleet(t)
			n, ok := f.Node(tc.node)
			require.True(t, ok)
			clock := &sim.FixedClock{T: time.Unix(1_800_000_000, 0)}
			mon, err := neuronmonitor.New(neuronmonitor.DefaultConfig(), sim.NewWorld(f), n, sim.Timeline{Start: clock.T, Speed: 60, Clock: clock}, clock.T)
			require.NoError(t, err)
			exporter := neuronmonitor.NewExporter()
			fromJSON, fromPage := newMapper(defaultSettings()), newMapper(defaultSettings())
			pages := promreport.NewReader()
			for i := range 4 {
				due, _ := mon.NextDue()
				clock.T = due
				doc, err := mon.Collect(due)
				require.NoError(t, err)

				rep, _, err := report.Decode(doc)
				require.NoError(t, err)
				viaJSON := fromJSON.Map(rep, due)

				require.NoError(t, exporter.Update(doc, due))
				page := promreport.Parse(string(exporter.Render(nil)))
				require.Zero(t, page.Errors.Count, "%v", page.Errors.First)
				prep, problems, err := pages.Report(page, due)
				require.NoError(t, err)
				require.Empty(t, problems)
				viaPage := fromPage.Map(prep, due)
				require.Empty(t, viaPage.Problems)

				assertCountedOnce(t, viaJSON.Metrics)
				assertCountedOnce(t, viaPage.Metrics)
				require.Positive(t, viaPage.Metrics.DataPointCount())
				require.NoError(t, pmetrictest.CompareMetrics(withoutWhatThePageLacks(viaJSON.Metrics), viaPage.Metrics,
					pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()), "report %d", i+1)
				require.NoError(t, plogtest.CompareLogs(viaJSON.Logs, viaPage.Logs), "report %d", i+1)
			}
		})
	}
}

// withoutWhatThePageLacks removes from the JSON input's output what
// neuron-monitor-prometheus.py does not export: the runtimes' pids
// (process.pid), flops, device latency, and the device memory size.
func withoutWhatThePageLacks(md pmetric.Metrics) pmetric.Metrics {
	out := pmetric.NewMetrics()
	md.CopyTo(out)
	rms := out.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			sms.At(j).Metrics().RemoveIf(func(m pmetric.Metric) bool {
				switch m.Name() {
				case accelschema.MetricFlops, accelschema.MetricGPUMemoryLimit:
					return true
				}
				var dps pmetric.NumberDataPointSlice
				if m.Type() == pmetric.MetricTypeGauge {
					dps = m.Gauge().DataPoints()
				} else {
					dps = m.Sum().DataPoints()
				}
				dps.RemoveIf(func(dp pmetric.NumberDataPoint) bool {
					return attr(dp.Attributes(), accelschema.AttrLatencyKind) == accelschema.LatencyDevice
				})
				for k := 0; k < dps.Len(); k++ {
					dps.At(k).Attributes().Remove(accelschema.AttrProcessPID)
				}
				return dps.Len() == 0
			})
		}
	}
	return out
}

func attr(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}
