package acceleratorcostprocessor

import (
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGoldenNode runs one node's worth of resources through three scrapes and
// a health event and compares what comes out with testdata/golden: the cost
// scope of every resource, the MIG remainder, a time-sliced GPU as the
// attributes processor shares it (its own resource for the half nobody
// holds, one copy per pod), and the finding records.
// Regenerate with `go test -run TestGoldenNode -update` and review the diff.
func TestGoldenNode(t *testing.T) {
	h := newHarness(t, testConfig())
	node := func(i int) []resource {
		return []resource{
			gpu("GPU-idle", held("notebook", s.WorkloadInteractive, s.MetricGREngineActive, 0.01)...),
			gpu("GPU-free", s.AttrAllocationState, s.AllocationUnallocated, s.MetricGREngineActive, 0.0),
			migInstance("GPU-M", "1", "4g.40gb", 4.0/7, held("pretrain", s.WorkloadTraining, s.MetricGREngineActive, 0.8, s.MetricTensorActive, 0.4)...),
			gpu("GPU-serve", held("chat", s.WorkloadInference, s.MetricGREngineActive, 0.1)...),
			sharedGPU("GPU-TS", 0.5, s.AllocationUnallocated, s.MetricPower, 250.0, s.MetricGREngineActive, 0.3),
			sliced("GPU-TS", "GPU-TS::0", 0.25, held("embed", s.WorkloadInference, s.MetricProcessUtilization, []float64{0.02})...),
			sliced("GPU-TS", "GPU-TS::1", 0.25, held("lab", s.WorkloadInteractive)...),
			res(s.AttrK8sPodUID, "uid-chat", s.MetricKVCacheUtilization, 0.2, s.MetricRequestsWaiting, 0.0),
		}
	}
	var out pmetric.Metrics
	for i := 0; i < 3; i++ {
		if i == 2 {
			h.sendLogs(healthEvent("GPU-free", at(time.Minute+10*time.Second), 48, s.HWStateFailed, s.ActionDrainAndReset))
		}
		out = h.send(at(time.Duration(i)*time.Minute), node(i)...)
	}
	require.Empty(t, countcheck.Violations(out))
	metricsPath := filepath.Join("testdata", "golden", "node_metrics.yaml")
	logsPath := filepath.Join("testdata", "golden", "node_findings.yaml")
	// Everything the logs pipeline received: the health event with the
	// unhealthy-capacity finding appended to it, then the findings the
	// metrics side raised.
	findings := plog.NewLogs()
	for _, ld := range h.lsink.AllLogs() {
		ld.ResourceLogs().MoveAndAppendTo(findings.ResourceLogs())
	}
	if *update {
		require.NoError(t, golden.WriteMetrics(t, metricsPath, out, golden.SkipMetricTimestampNormalization()))
		require.NoError(t, golden.WriteLogs(t, logsPath, findings))
	}
	wantMetrics, err := golden.ReadMetrics(metricsPath)
	require.NoError(t, err)
	require.NoError(t, pmetrictest.CompareMetrics(wantMetrics, out,
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder(),
		pmetrictest.IgnoreMetricFloatPrecision(10, s.MetricPrice, s.MetricCost, s.MetricWaste)))
	wantLogs, err := golden.ReadLogs(logsPath)
	require.NoError(t, err)
	require.NoError(t, plogtest.CompareLogs(wantLogs, findings, plogtest.IgnoreObservedTimestamp(), plogtest.IgnoreResourceLogsOrder()))
}
