package mapping

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/promreport"
)

// promPage reads a fixture page of neuron-monitor-prometheus.py.
func promPage(t testing.TB, name string) promscrape.Page {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "prometheus", name))
	require.NoError(t, err)
	p := promreport.Parse(string(raw))
	require.Zero(t, p.Errors.Count, "fixture %s parses cleanly: %v", name, p.Errors.First)
	return p
}

// inf2-1.prom and inf2-2.prom are two scrapes, 5 s apart, of the exporter
// on an inf2.xlarge (one device, two NeuronCores) where two runtimes run at
// once: "llama-inf2" on core 0 and one without NEURON_PROCESS_TAG (tagged
// with its pid, 31337) on core 1. Between the scrapes llama-inf2 completes
// 50 more executions, 31337 12 more and goes idle while keeping its memory,
// and the device has its first uncorrected ECC event.
func TestPrometheusPages(t *testing.T) {
	m := newMapper(defaultSettings())
	rd := promreport.NewReader()
	allLogs := plog.NewLogs()
	var outputs []pmetric.Metrics
	for i, name := range []string{"inf2-1.prom", "inf2-2.prom"} {
		now := epoch.Add(time.Duration(i) * 5 * time.Second)
		rep, problems, err := rd.Report(promPage(t, name), now)
		require.NoError(t, err)
		require.Empty(t, problems)
		res := m.Map(rep, now)
		require.Empty(t, res.Problems)
		assertCountedOnce(t, res.Metrics)
		compareMetricsGolden(t, "prometheus-inf2-"+string(rune('1'+i))+".yaml", res.Metrics)
		res.Logs.ResourceLogs().MoveAndAppendTo(allLogs.ResourceLogs())
		outputs = append(outputs, res.Metrics)
	}
	compareLogsGolden(t, "prometheus-inf2-health.yaml", allLogs)

	// The values, worked out from the pages by hand.
	first, second := outputs[0], outputs[1]
	dev, core0, core1 := "neuron_device_0", "neuron_device_0/neuroncore_0", "neuron_device_0/neuroncore_1"
	assert.Equal(t, []float64{0.8901827638996558}, values(first, core0, accelschema.MetricGPUUtilization, nil), "ratio as exported, no pid")
	assert.Equal(t, []float64{0.25}, values(first, core1, accelschema.MetricGPUUtilization, nil))
	assert.Equal(t, []float64{0}, values(second, core1, accelschema.MetricGPUUtilization, nil), "idle but holding memory: 0 under its runtime")
	assert.Equal(t, []float64{61766864}, values(first, core0, accelschema.MetricGPUMemoryUsage, map[string]string{accelschema.AttrMemoryCategory: "constants"}))
	assert.Equal(t, []float64{1048576}, values(first, core1, accelschema.MetricGPUMemoryUsage, map[string]string{accelschema.AttrMemoryCategory: "tensors"}))
	assert.Empty(t, values(first, dev, accelschema.MetricGPUMemoryUsage, nil), "the device does not repeat its cores' memory")
	// Runtime series on each runtime's (lowest) core.
	completed := map[string]string{accelschema.AttrExecutionStatus: accelschema.ExecCompleted}
	assert.Equal(t, []float64{1250}, values(first, core0, accelschema.MetricExecutions, completed), "a counter seen first counts from its creation")
	assert.Equal(t, []float64{1300}, values(second, core0, accelschema.MetricExecutions, completed))
	assert.Equal(t, []float64{300}, values(first, core1, accelschema.MetricExecutions, completed))
	assert.Equal(t, []float64{312}, values(second, core1, accelschema.MetricExecutions, completed))
	assert.Equal(t, []float64{2}, values(second, core0, accelschema.MetricExecutionErrors, map[string]string{accelschema.AttrErrorType: accelschema.ErrorExecGeneric}))
	assert.Equal(t, []float64{0.0041}, values(second, core0, accelschema.MetricExecutionLatency, map[string]string{accelschema.AttrLatencyPercentile: "p100"}))
	assert.Equal(t, []float64{0.0123}, values(first, core1, accelschema.MetricExecutionLatency, map[string]string{accelschema.AttrLatencyPercentile: "p50", accelschema.AttrLatencyKind: "total"}))
	assert.Equal(t, []float64{1119887360}, values(first, core0, accelschema.MetricRuntimeMemory, map[string]string{accelschema.AttrMemoryLocation: "host"}))
	assert.Equal(t, []float64{22049600}, values(first, core1, accelschema.MetricRuntimeMemory, map[string]string{accelschema.AttrMemoryLocation: "device"}))
	assert.Equal(t, []float64{0.04}, values(first, core0, accelschema.MetricRuntimeCPU, map[string]string{accelschema.AttrCPUMode: "user"}))
	// The device: ECC totals and the state they lead to.
	assert.Equal(t, []float64{3}, values(first, dev, accelschema.MetricErrors, map[string]string{accelschema.AttrErrorType: accelschema.ErrorECCCorrected}))
	assert.Equal(t, []float64{1}, values(second, dev, accelschema.MetricErrors, map[string]string{accelschema.AttrErrorType: accelschema.ErrorECCUncorrected}))
	assert.Equal(t, []float64{1}, values(first, dev, accelschema.MetricStatus, map[string]string{accelschema.AttrHWState: accelschema.HWStateOK}))
	assert.Equal(t, []float64{1}, values(second, dev, accelschema.MetricStatus, map[string]string{accelschema.AttrHWState: accelschema.HWStateFailed}))
	assert.Equal(t, 2, allLogs.LogRecordCount(), "3 corrected on the first scrape, 1 uncorrected on the second")

	res := first.ResourceMetrics()
	for i := 0; i < res.Len(); i++ {
		attrs := res.At(i).Resource().Attributes().AsRaw()
		assert.Equal(t, "i-0d3e5b7a9c1f24680", attrs[accelschema.AttrHostID])
		assert.Equal(t, "inf2.xlarge", attrs[accelschema.AttrHostType])
		assert.Equal(t, "us-west-2", attrs[accelschema.AttrCloudRegion])
		assert.Equal(t, "us-west-2c", attrs[accelschema.AttrCloudZone])
		assert.Equal(t, "inferentia2", attrs[accelschema.AttrHWModel], "from the instance family: the page has no device type")
		assert.NotContains(t, attrs, accelschema.AttrHostName, `instance_name="" is unknown`)
	}
}

// values returns the values of metric's points on the resource hw.id=id
// whose attributes include want.
func values(md pmetric.Metrics, id, metric string, want map[string]string) []float64 {
	var out []float64
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		if v, _ := rms.At(i).Resource().Attributes().Get(accelschema.AttrHWID); v.Str() != id {
			continue
		}
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				if m.Name() != metric {
					continue
				}
				var dps pmetric.NumberDataPointSlice
				if m.Type() == pmetric.MetricTypeGauge {
					dps = m.Gauge().DataPoints()
				} else {
					dps = m.Sum().DataPoints()
				}
				for l := 0; l < dps.Len(); l++ {
					if matches(dps.At(l).Attributes(), want) {
						out = append(out, number(dps.At(l)))
					}
				}
			}
		}
	}
	return out
}

func matches(attrs pcommon.Map, want map[string]string) bool {
	if _, ok := attrs.Get(accelschema.AttrProcessPID); ok {
		return false // the page has no pid: a pid here is a bug
	}
	for k, v := range want {
		if got, ok := attrs.Get(k); !ok || got.AsString() != v {
			return false
		}
	}
	return true
}

func number(dp pmetric.NumberDataPoint) float64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(dp.IntValue())
	}
	return dp.DoubleValue()
}
