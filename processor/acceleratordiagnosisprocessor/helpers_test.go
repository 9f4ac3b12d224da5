package acceleratordiagnosisprocessor

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratordiagnosisprocessor/internal/metadata"
)

// step is the data-time distance between two scrapes in the tests; four
// scrapes make a one-minute window.
const step = 15 * time.Second

var epoch = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) pcommon.Timestamp { return pcommon.NewTimestampFromTime(epoch.Add(d)) }

func testConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Baselines.MinSamples = 4
	cfg.Baselines.Warmup = 2 * time.Minute // two of the seven steady windows
	cfg.MinRequests = 10
	return cfg
}

// harness runs one processor through its factory, in a metrics and a logs
// pipeline, as a collector would.
type harness struct {
	t       testing.TB
	metrics processor.Metrics
	logs    processor.Logs
	mout    *consumertest.MetricsSink
	lout    *consumertest.LogsSink
}

func newHarness(tb testing.TB, cfg *Config, host component.Host, id component.ID) *harness {
	tb.Helper()
	f := NewFactory()
	set := processortest.NewNopSettings(metadata.Type)
	set.ID = id
	h := &harness{t: tb, mout: &consumertest.MetricsSink{}, lout: &consumertest.LogsSink{}}
	var err error
	h.metrics, err = f.CreateMetrics(context.Background(), set, cfg, h.mout)
	require.NoError(tb, err)
	h.logs, err = f.CreateLogs(context.Background(), set, cfg, h.lout)
	require.NoError(tb, err)
	if host == nil {
		host = componenttest.NewNopHost()
	}
	require.NoError(tb, h.metrics.Start(context.Background(), host))
	require.NoError(tb, h.logs.Start(context.Background(), host))
	return h
}

func (h *harness) shutdown() {
	require.NoError(h.t, h.metrics.Shutdown(context.Background()))
	require.NoError(h.t, h.logs.Shutdown(context.Background()))
}

func (h *harness) sendMetrics(md pmetric.Metrics) {
	require.NoError(h.t, h.metrics.ConsumeMetrics(context.Background(), md))
}

func (h *harness) sendLogs(ld plog.Logs) {
	require.NoError(h.t, h.logs.ConsumeLogs(context.Background(), ld))
}

// regressionFinding is a latency_regression record as the tests read it.
type regressionFinding struct {
	cause, evidence, action, also string
	body, nodes                   string
	res                           map[string]any
}

// findings returns the latency_regression records the logs pipeline got.
func (h *harness) findings() []regressionFinding {
	var out []regressionFinding
	for _, ld := range h.lout.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				lrs := rl.ScopeLogs().At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					a := lrs.At(k).Attributes()
					if str(a, s.AttrFindingKind) != s.FindingLatencyRegression {
						continue
					}
					out = append(out, regressionFinding{str(a, s.AttrFindingCause), str(a, s.AttrFindingEvidence),
						str(a, s.AttrFindingAction), str(a, s.AttrFindingAlso), lrs.At(k).Body().AsString(),
						str(a, s.AttrFindingNodes), rl.Resource().Attributes().AsRaw()})
				}
			}
		}
	}
	return out
}

// regressions returns the last value of the regressions counter by cause.
func (h *harness) regressions() map[string]int64 {
	out := map[string]int64{}
	for _, md := range h.mout.AllMetrics() {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					if m := ms.At(k); m.Name() == s.MetricLatencyRegressions {
						for d := 0; d < m.Sum().DataPoints().Len(); d++ {
							dp := m.Sum().DataPoints().At(d)
							out[str(dp.Attributes(), s.AttrRegressionCause)] = dp.IntValue()
						}
					}
				}
			}
		}
	}
	return out
}

var (
	ttftBounds = []float64{0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2}
	itlBounds  = []float64{0.005, 0.01, 0.02, 0.04, 0.08, 0.16}
)

// server is one simulated inference server pod: cumulative histograms and
// counters, and the gauges of its last scrape.
type server struct {
	pod, namespace, workload, model string
	node                            string // k8s.node.name, "" for none
	start                           pcommon.Timestamp
	ttft, itl                       []uint64
	preemptions                     float64
	// Per scrape.
	ttftValue, itlValue  float64 // where this scrape's requests land
	requests             uint64
	kv, waiting, running float64
	preemptPerScrape     float64
}

func newServer(pod string) *server {
	return &server{pod: pod, namespace: "chat", workload: "vllm-llama", model: "meta-llama/Llama-3.1-8B-Instruct",
		start: at(-time.Hour), ttft: make([]uint64, len(ttftBounds)+1), itl: make([]uint64, len(itlBounds)+1),
		ttftValue: 0.15, itlValue: 0.015, requests: 30, kv: 0.6, running: 40}
}

func onNode(sv *server, node string) *server {
	sv.node = node
	return sv
}

func bucketOf(bounds []float64, v float64) int {
	return sort.SearchFloat64s(bounds, v)
}

// scrape advances the server by one scrape and writes its resource.
func (sv *server) scrape(md pmetric.Metrics, t pcommon.Timestamp) {
	sv.ttft[bucketOf(ttftBounds, sv.ttftValue)] += sv.requests
	sv.itl[bucketOf(itlBounds, sv.itlValue)] += sv.requests * 50
	sv.preemptions += sv.preemptPerScrape
	rm := md.ResourceMetrics().AppendEmpty()
	r := rm.Resource().Attributes()
	r.PutStr(s.AttrK8sPodUID, sv.pod)
	r.PutStr(s.AttrK8sPodName, sv.pod)
	if sv.node != "" {
		r.PutStr(s.AttrK8sNodeName, sv.node)
	}
	r.PutStr(s.AttrK8sNamespaceName, sv.namespace)
	r.PutStr(s.AttrWorkloadName, sv.workload)
	r.PutStr(s.AttrGenAIProviderName, "vllm")
	r.PutStr(s.AttrGenAIRequestModel, sv.model)
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	hist := func(name string, bounds []float64, counts []uint64) {
		m := ms.AppendEmpty()
		m.SetName(name)
		h := m.SetEmptyHistogram()
		h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		dp := h.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(sv.start)
		dp.SetTimestamp(t)
		dp.ExplicitBounds().FromRaw(bounds)
		dp.BucketCounts().FromRaw(counts)
		var n uint64
		for _, c := range counts {
			n += c
		}
		dp.SetCount(n)
	}
	hist(s.MetricTimeToFirstToken, ttftBounds, sv.ttft)
	hist(s.MetricInterTokenLatency, itlBounds, sv.itl)
	gauge(ms, s.MetricKVCacheUtilization, t, sv.kv)
	gauge(ms, s.MetricRequestsWaiting, t, sv.waiting)
	gauge(ms, s.MetricRequestsRunning, t, sv.running)
	m := ms.AppendEmpty()
	m.SetName(s.MetricPreemptions)
	sum := m.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dp := sum.DataPoints().AppendEmpty()
	dp.SetStartTimestamp(sv.start)
	dp.SetTimestamp(t)
	dp.SetDoubleValue(sv.preemptions)
}

func gauge(ms pmetric.MetricSlice, name string, t pcommon.Timestamp, v float64, attrs ...string) {
	m := ms.AppendEmpty()
	m.SetName(name)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(t)
	dp.SetDoubleValue(v)
	for i := 0; i+1 < len(attrs); i += 2 {
		dp.Attributes().PutStr(attrs[i], attrs[i+1])
	}
}

// gpu is one device resource: a whole GPU held by pod, or (with parent) a
// consumer's copy of a shared one.
type gpu struct {
	id, parent, partitionType, pod string
	partitionID                    string
	sm, tensor                     float64
	powerThrottle, thermalThrottle float64
	procUtil                       float64 // on a copy: its consumer's processes
	copyOnly                       bool    // a copy carries no device-wide readings
	// perPod: the copy's activity is dcgm-exporter's per-pod utilization
	// (hw.gpu.utilization), not NVML's per-process.
	perPod bool
}

func (g *gpu) scrape(md pmetric.Metrics, t pcommon.Timestamp) {
	rm := md.ResourceMetrics().AppendEmpty()
	r := rm.Resource().Attributes()
	r.PutStr(s.AttrHWID, g.id)
	r.PutStr(s.AttrHWModel, "NVIDIA H100 80GB HBM3")
	if g.parent != "" {
		r.PutStr(s.AttrHWParent, g.parent)
		r.PutStr(s.AttrPartitionType, g.partitionType)
	}
	if g.partitionID != "" {
		r.PutStr(s.AttrPartitionID, g.partitionID)
	}
	if g.pod != "" {
		r.PutStr(s.AttrK8sPodUID, g.pod)
	}
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	if g.copyOnly {
		if g.perPod {
			gauge(ms, s.MetricGPUUtilization, t, g.procUtil, s.AttrHWGPUTask, s.GPUTaskGeneral)
		} else {
			gauge(ms, s.MetricProcessUtilization, t, g.procUtil, s.AttrProcessPID, "4242")
		}
		return
	}
	gauge(ms, s.MetricSMActive, t, g.sm)
	gauge(ms, s.MetricTensorActive, t, g.tensor)
	m := ms.AppendEmpty()
	m.SetName(s.MetricThrottleActive)
	dps := m.SetEmptyGauge().DataPoints()
	for reason, v := range map[string]float64{s.ThrottlePower: g.powerThrottle, s.ThrottleThermal: g.thermalThrottle} {
		dp := dps.AppendEmpty()
		dp.SetTimestamp(t)
		dp.SetIntValue(int64(v))
		dp.Attributes().PutStr(s.AttrThrottleReason, reason)
	}
}

// fleet is what one batch holds: every server's and device's scrape.
type fleet struct {
	servers []*server
	gpus    []*gpu
}

func (f *fleet) batch(t pcommon.Timestamp) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for _, sv := range f.servers {
		sv.scrape(md, t)
	}
	for _, g := range f.gpus {
		g.scrape(md, t)
	}
	return md
}

// twoReplicas is an endpoint of two pods on two whole GPUs, healthy under
// steady load.
func twoReplicas() *fleet {
	return &fleet{
		servers: []*server{onNode(newServer("pod-a"), "node-a"), onNode(newServer("pod-b"), "node-b")},
		gpus: []*gpu{
			{id: "GPU-A", pod: "pod-a", sm: 0.55, tensor: 0.4},
			{id: "GPU-B", pod: "pod-b", sm: 0.5, tensor: 0.35},
		},
	}
}

// record is a log record of the Kubernetes side or a health event.
func record(ld plog.Logs, t pcommon.Timestamp, event string, res map[string]any, attrs map[string]any) {
	rl := ld.ResourceLogs().AppendEmpty()
	_ = rl.Resource().Attributes().FromRaw(res)
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(t)
	lr.SetEventName(event)
	_ = lr.Attributes().FromRaw(attrs)
	lr.Attributes().PutStr(s.AttrEventName, event)
}

func workloadRes() map[string]any {
	return map[string]any{s.AttrK8sNamespaceName: "chat", s.AttrWorkloadName: "vllm-llama", s.AttrGenAIRequestModel: "meta-llama/Llama-3.1-8B-Instruct"}
}

func processortestSettings() processor.Settings {
	return processortest.NewNopSettings(metadata.Type)
}
