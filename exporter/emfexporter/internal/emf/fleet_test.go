package emf

import (
	"regexp"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Fixtures shared by the tests, the fuzz seeds and the benchmark: what the
// receivers and processors of this project emit for a small fleet.

var testTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// projectOptions mirrors the exporter's default configuration.
func projectOptions() Options {
	return Options{
		Namespace: "OtelcolAccel",
		Dimensions: []Dimension{
			{Name: "Cluster", Attributes: []string{as.AttrK8sClusterName}},
			{Name: "Node", Attributes: []string{as.AttrK8sNodeName, as.AttrHostName}},
			{Name: "Team", Attributes: []string{as.AttrTeam}},
			{Name: "Namespace", Attributes: []string{as.AttrK8sNamespaceName}},
			{Name: "Workload", Attributes: []string{as.AttrWorkloadName}},
			{Name: "Device", Attributes: []string{as.AttrHWID}},
			{Name: "Partition", Attributes: []string{as.AttrPartitionID}},
		},
		DimensionSets: [][]string{
			{"Cluster"},
			{"Cluster", "Team"},
			{"Cluster", "Namespace", "Workload"},
			{"Cluster", "Node", "Device"},
			{"Cluster", "Node", "Device", "Partition"},
		},
		Declarations: []Declaration{{
			MetricNameSelectors: []*regexp.Regexp{regexp.MustCompile(`^accelerator\.(cost|waste)$`)},
			DimensionSets:       [][]string{{"Cluster"}, {"Cluster", "Team"}},
		}},
		DatapointDimensions:        true,
		ExcludeDatapointDimensions: []string{as.AttrProcessPID},
		FallbackToAvailable:        true,
		ResourceAttributesAsFields: true,
		HighResolution:             []*regexp.Regexp{regexp.MustCompile(`^gen_ai\.server\.requests\.(running|waiting)$`)},
	}
}

func ts(t time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t) }

func gpuResource(rm pmetric.ResourceMetrics, node, uuid string, withPod bool) {
	a := rm.Resource().Attributes()
	a.PutStr(as.AttrHWID, uuid)
	a.PutStr(as.AttrHWType, "gpu")
	a.PutStr(as.AttrHWVendor, "NVIDIA")
	a.PutStr(as.AttrHWModel, "NVIDIA H100 80GB HBM3")
	a.PutStr(as.AttrKind, "nvidia_gpu")
	a.PutStr(as.AttrPartitionType, "none")
	a.PutDouble(as.AttrPartitionShare, 1)
	a.PutStr(as.AttrHostName, node)
	a.PutStr(as.AttrK8sNodeName, node)
	a.PutStr(as.AttrK8sClusterName, "prod-east")
	a.PutStr(as.AttrHostType, "p5.48xlarge")
	if withPod {
		a.PutStr(as.AttrK8sNamespaceName, "ml-train")
		a.PutStr(as.AttrK8sPodName, "llama-ft-0")
		a.PutStr(as.AttrTeam, "research")
		a.PutStr(as.AttrWorkloadName, "llama-ft")
		a.PutStr(as.AttrWorkloadType, "training")
	}
}

func gauge(sm pmetric.ScopeMetrics, name, unit string, v float64, t time.Time) pmetric.NumberDataPoint {
	m := sm.Metrics().AppendEmpty()
	m.SetName(name)
	m.SetUnit(unit)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(ts(t))
	dp.SetDoubleValue(v)
	return dp
}

func deltaSum(sm pmetric.ScopeMetrics, name, unit string) pmetric.NumberDataPointSlice {
	m := sm.Metrics().AppendEmpty()
	m.SetName(name)
	m.SetUnit(unit)
	s := m.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	return s.DataPoints()
}

// fleetMetrics is one scrape of a node with a training GPU, a MIG slice,
// an inference server and the cost processor's output.
func fleetMetrics() pmetric.Metrics {
	md := pmetric.NewMetrics()

	rm := md.ResourceMetrics().AppendEmpty()
	gpuResource(rm, "ip-10-0-1-17", "GPU-8f3c2a10-1111-2222-3333-444455556666", true)
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver")
	gauge(sm, as.MetricGPUUtilization, as.UnitRatio, 0.87, testTime).Attributes().PutStr(as.AttrHWGPUTask, "general")
	gauge(sm, as.MetricPower, as.UnitWatts, 612.5, testTime)
	gauge(sm, as.MetricTemperature, as.UnitCelsius, 71, testTime).Attributes().PutStr(as.AttrHWSensorLocation, "gpu")
	gauge(sm, as.MetricSMActive, as.UnitRatio, 0.64, testTime)
	mem := sm.Metrics().AppendEmpty()
	mem.SetName(as.MetricGPUMemoryUsage)
	mem.SetUnit(as.UnitBytes)
	ms := mem.SetEmptySum()
	ms.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	mdp := ms.DataPoints().AppendEmpty()
	mdp.SetTimestamp(ts(testTime))
	mdp.SetIntValue(61_203_283_968)
	errs := deltaSum(sm, as.MetricErrors, as.UnitErrors).AppendEmpty()
	errs.SetTimestamp(ts(testTime))
	errs.SetStartTimestamp(ts(testTime.Add(-10 * time.Second)))
	errs.SetIntValue(1)
	errs.Attributes().PutStr(as.AttrErrorType, "xid")
	errs.Attributes().PutInt(as.AttrXID, 79)
	proc := gauge(sm, as.MetricProcessMemoryUsage, as.UnitBytes, 40e9, testTime)
	proc.Attributes().PutInt(as.AttrProcessPID, 4242)

	// A MIG slice with no pod: Team, Namespace and Workload are missing, so
	// only the sets without them apply.
	rm = md.ResourceMetrics().AppendEmpty()
	gpuResource(rm, "ip-10-0-1-17", "MIG-5c1d7e0a-aaaa-bbbb-cccc-ddddeeeeffff", false)
	rm.Resource().Attributes().PutStr(as.AttrPartitionType, "mig")
	rm.Resource().Attributes().PutStr(as.AttrPartitionID, "3")
	rm.Resource().Attributes().PutStr(as.AttrPartitionProfile, "1g.10gb")
	rm.Resource().Attributes().PutStr(as.AttrAllocationState, "unallocated")
	sm = rm.ScopeMetrics().AppendEmpty()
	gauge(sm, as.MetricGPUMemoryUtilization, as.UnitRatio, 0, testTime)
	w := deltaSum(sm, as.MetricWaste, as.UnitUSD).AppendEmpty()
	w.SetTimestamp(ts(testTime))
	w.SetDoubleValue(0.0175)
	w.Attributes().PutStr(as.AttrWasteReason, "unallocated")

	// An inference server: latency histograms with real vLLM buckets.
	rm = md.ResourceMetrics().AppendEmpty()
	a := rm.Resource().Attributes()
	a.PutStr(as.AttrK8sClusterName, "prod-east")
	a.PutStr(as.AttrK8sNodeName, "ip-10-0-1-17")
	a.PutStr(as.AttrK8sNamespaceName, "serving")
	a.PutStr(as.AttrWorkloadName, "llama-3-70b")
	a.PutStr(as.AttrTeam, "assistant")
	a.PutStr(as.AttrGenAIProviderName, "vllm")
	a.PutStr(as.AttrGenAIRequestModel, "meta-llama/Llama-3.1-70B-Instruct")
	sm = rm.ScopeMetrics().AppendEmpty()
	h := sm.Metrics().AppendEmpty()
	h.SetName(as.MetricTimeToFirstToken)
	h.SetUnit(as.UnitSeconds)
	hh := h.SetEmptyHistogram()
	hh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	hdp := hh.DataPoints().AppendEmpty()
	hdp.SetStartTimestamp(ts(testTime.Add(-10 * time.Second)))
	hdp.SetTimestamp(ts(testTime))
	hdp.ExplicitBounds().FromRaw([]float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10})
	hdp.BucketCounts().FromRaw([]uint64{0, 0, 3, 12, 40, 22, 9, 4, 6, 1, 0, 0, 0, 0, 0, 0, 2})
	hdp.SetCount(99)
	hdp.SetSum(6.42)
	hdp.SetMax(12.5)
	gauge(sm, as.MetricRequestsRunning, as.UnitRequests, 17, testTime)
	gauge(sm, as.MetricRequestsWaiting, as.UnitRequests, 3, testTime)
	eh := sm.Metrics().AppendEmpty()
	eh.SetName(as.MetricRequestDuration)
	eh.SetUnit(as.UnitSeconds)
	ehh := eh.SetEmptyExponentialHistogram()
	ehh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	edp := ehh.DataPoints().AppendEmpty()
	edp.SetTimestamp(ts(testTime))
	edp.SetScale(2)
	edp.SetZeroCount(1)
	edp.Positive().SetOffset(-4)
	edp.Positive().BucketCounts().FromRaw([]uint64{2, 5, 0, 7, 1})
	edp.SetCount(16)
	edp.SetSum(10.3)
	edp.SetMin(0)
	edp.SetMax(1.9)
	return md
}

// wideHistogram is an exponential histogram with n non-empty buckets.
func wideHistogram(n int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	gpuResource(rm, "ip-10-0-1-17", "GPU-0", true)
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName(as.MetricInterTokenLatency)
	m.SetUnit(as.UnitSeconds)
	eh := m.SetEmptyExponentialHistogram()
	eh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	dp := eh.DataPoints().AppendEmpty()
	dp.SetTimestamp(ts(testTime))
	dp.SetScale(5)
	dp.Positive().SetOffset(-200)
	counts := make([]uint64, n)
	var total uint64
	for i := range counts {
		counts[i] = uint64(1 + i%7)
		total += counts[i]
	}
	dp.Positive().BucketCounts().FromRaw(counts)
	dp.SetCount(total)
	dp.SetSum(float64(total) * 0.03)
	return md
}
