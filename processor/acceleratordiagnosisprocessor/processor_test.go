package acceleratordiagnosisprocessor

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/baseline"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratordiagnosisprocessor/internal/metadata"
)

// drive sends scrapes from..to (exclusive, in steps) of f, calling each
// before a scrape is taken.
func drive(h *harness, f *fleet, from, to int, each func(i int)) {
	for i := from; i < to; i++ {
		if each != nil {
			each(i)
		}
		h.sendMetrics(f.batch(at(time.Duration(i) * step)))
	}
}

const (
	steadyScrapes = 28 // seven one-minute windows: a warm baseline
	afterScrapes  = 40 // ten more windows
)

func regress(f *fleet) {
	for _, sv := range f.servers {
		sv.ttftValue = 0.6 // TTFT p95 0.195 s → 0.78 s
	}
}

// An endpoint under steady load, busy but at its own normal, raises
// nothing, however long it runs; its baseline is what it showed.
func TestSteadyHealthyEndpointRaisesNothing(t *testing.T) {
	h := newHarness(t, testConfig(), nil, component.NewID(metadata.Type))
	defer h.shutdown()
	f := twoReplicas()
	for _, sv := range f.servers {
		sv.kv, sv.waiting, sv.running = 0.85, 1, 120
	}
	drive(h, f, 0, steadyScrapes+afterScrapes, nil)
	assert.Empty(t, h.findings())
	assert.Empty(t, h.regressions())

	p := instanceOf(t, h)
	p.mu.Lock()
	defer p.mu.Unlock()
	v, n, warm := p.baselines.Get(baselineKey(signalTTFT))
	assert.True(t, warm)
	assert.Greater(t, n, 10)
	assert.InDelta(t, 0.195, v, 1e-9, "every request in (0.1, 0.2]: p95 interpolates to 0.195")
}

// instanceOf is the processor instance behind the harness's default ID.
func instanceOf(t *testing.T, _ *harness) *diagnosisProcessor {
	t.Helper()
	c, err := instances.LoadOrStore(component.NewID(metadata.Type), func() (*diagnosisProcessor, error) {
		return nil, errors.New("no running instance")
	})
	require.NoError(t, err)
	return c.Unwrap()
}

func baselineKey(signal string) baseline.Key {
	return baseline.Key{Workload: "chat/vllm-llama", Model: "meta-llama/Llama-3.1-8B-Instruct", Signal: signal}
}

// Each injected condition, with the regression it causes, names its cause
// with its evidence; the finding names the endpoint and is counted.
func TestEachCauseFromRealSignals(t *testing.T) {
	for _, c := range []struct {
		cause    string
		fleet    func() *fleet
		inject   func(h *harness, f *fleet, i int)
		evidence []string
	}{
		{s.CauseKVCachePressure, twoReplicas, func(_ *harness, f *fleet, _ int) {
			for _, sv := range f.servers {
				sv.kv, sv.preemptPerScrape = 0.97, 3
			}
		}, []string{"kv_cache_usage=0.97", "preemptions_per_s=0.4"}}, // 3 a scrape on each of two pods: 24 a minute
		{s.CauseQueueing, twoReplicas, func(_ *harness, f *fleet, _ int) {
			for _, sv := range f.servers {
				sv.waiting, sv.running = 12, 250
			}
		}, []string{"requests_waiting=12", "requests_running=250", "max_running=256"}},
		{s.CauseDeviceSaturation, twoReplicas, func(_ *harness, f *fleet, _ int) {
			f.gpus[0].sm, f.gpus[0].tensor = 0.97, 0.85
		}, []string{"sm_active=0.97", "tensor_active=0.85"}},
		{s.CauseThrottling, twoReplicas, func(_ *harness, f *fleet, _ int) {
			f.gpus[1].thermalThrottle = 1
		}, []string{"throttle_thermal=1", "throttle_power=0"}},
		{s.CauseUnhealthyDevice, twoReplicas, func(h *harness, _ *fleet, i int) {
			if i == steadyScrapes {
				ld := plog.NewLogs()
				record(ld, at(time.Duration(i)*step), s.EventXID, map[string]any{s.AttrHWID: "GPU-A"}, map[string]any{s.AttrXID: int64(48)})
				h.sendLogs(ld)
			}
		}, []string{"xid_events=1", "ecc_uncorrected=0"}},
		{s.CauseNoisyNeighbour, sharedGPU, func(_ *harness, f *fleet, _ int) {
			f.gpus[2].procUtil = 0.6
		}, []string{"shared_device=true", "neighbour_activity=0.6"}},
		{s.CauseNoisyNeighbour + "/per_pod_usage", func() *fleet {
			f := sharedGPU()
			f.gpus[1].perPod, f.gpus[2].perPod = true, true
			return f
		}, func(_ *harness, f *fleet, _ int) {
			f.gpus[2].procUtil = 0.7
		}, []string{"shared_device=true", "neighbour_activity=0.7"}},
		{s.CauseColdReplica, twoReplicas, func(h *harness, _ *fleet, i int) {
			if i == steadyScrapes {
				ld := plog.NewLogs()
				record(ld, at(time.Duration(i)*step), s.EventColdStart, withPod(workloadRes(), "pod-c"), map[string]any{s.ColdStartPhaseAttr(s.PhaseTotal): 95.0})
				record(ld, at(time.Duration(i)*step), s.EventScaling, workloadRes(), map[string]any{
					s.AttrScalingFrom: int64(2), s.AttrScalingTo: int64(3), s.AttrScalingDirection: s.ScalingUp, s.AttrScalingOutcome: s.ScalingReady})
				h.sendLogs(ld)
			}
		}, []string{"cold_replicas=1", "replicas=2"}},
		{s.CauseZoneImbalance, twoReplicas, func(h *harness, _ *fleet, i int) {
			if i == steadyScrapes {
				ld := plog.NewLogs()
				record(ld, at(time.Duration(i)*step), s.EventFinding, workloadRes(), map[string]any{
					s.AttrFindingKind: s.FindingZoneImbalance, s.AttrFindingEvidence: "replicas_us-east-1a=2 replicas_us-east-1b=0"})
				h.sendLogs(ld)
			}
			h.sendMetrics(zoneReplicas(at(time.Duration(i)*step), map[string]int64{"us-east-1a": 2, "us-east-1b": 0}))
		}, []string{"replicas_us-east-1a=2 replicas_us-east-1b=0"}},
	} {
		t.Run(c.cause, func(t *testing.T) {
			h := newHarness(t, testConfig(), nil, component.NewIDWithName(metadata.Type, strings.ReplaceAll(c.cause, "/", "_")))
			defer h.shutdown()
			f := c.fleet()
			drive(h, f, 0, steadyScrapes, nil)
			require.Empty(t, h.findings(), "steady: no finding")
			drive(h, f, steadyScrapes, steadyScrapes+12, func(i int) {
				c.inject(h, f, i)
				regress(f)
			})
			fs := h.findings()
			require.Len(t, fs, 1, "one finding within the cooldown")
			got := fs[0]
			cause, _, _ := strings.Cut(c.cause, "/")
			assert.Equal(t, cause, got.cause)
			assert.Contains(t, got.evidence, "cause="+cause+" ttft_p95=0.78 ttft_baseline_p95=0.195")
			for _, e := range c.evidence {
				assert.Contains(t, got.evidence, e)
			}
			assert.NotEmpty(t, got.action)
			assert.Equal(t, "chat/vllm-llama", got.res[s.AttrInferenceEndpoint])
			assert.Equal(t, "meta-llama/Llama-3.1-8B-Instruct", got.res[s.AttrGenAIRequestModel])
			assert.Equal(t, map[string]int64{cause: 1}, h.regressions())
		})
	}
}

func withPod(res map[string]any, pod string) map[string]any {
	res[s.AttrK8sPodUID], res[s.AttrK8sPodName] = pod, pod
	return res
}

// sharedGPU is an endpoint of one pod on a time-sliced replica of GPU-S,
// whose other replica another pod uses lightly (until a test makes it busy).
// An XID on GPU-S would count once, for the physical device.
func sharedGPU() *fleet {
	sv := onNode(newServer("pod-a"), "node-a")
	return &fleet{
		servers: []*server{sv},
		gpus: []*gpu{
			// As accelerator_attributes writes them: the device's own
			// resource, and one copy per consumer with the GPU's hw.id,
			// the GPU as parent and the replicas held as partition id.
			{id: "GPU-S", sm: 0.6, tensor: 0.3},
			{id: "GPU-S", parent: "GPU-S", partitionType: s.PartitionTimeSlicing, partitionID: "GPU-S::0", pod: "pod-a", procUtil: 0.3, copyOnly: true},
			{id: "GPU-S", parent: "GPU-S", partitionType: s.PartitionTimeSlicing, partitionID: "GPU-S::1", pod: "pod-batch", procUtil: 0.05, copyOnly: true},
		},
	}
}

// zoneReplicas is accelerator_k8s's ready replicas of chat/vllm-llama per zone.
func zoneReplicas(t pcommon.Timestamp, zones map[string]int64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for zone, n := range zones {
		rm := md.ResourceMetrics().AppendEmpty()
		_ = rm.Resource().Attributes().FromRaw(workloadRes())
		rm.Resource().Attributes().PutStr(s.AttrCloudZone, zone)
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName(s.MetricWorkloadReplicas)
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(t)
		dp.SetIntValue(n)
	}
	return md
}

// The same signals without a regression are no finding; a regression with
// none of them is undetermined, with the latencies only.
func TestNoCauseWithoutEvidence(t *testing.T) {
	h := newHarness(t, testConfig(), nil, component.NewIDWithName(metadata.Type, "undetermined"))
	defer h.shutdown()
	f := twoReplicas()
	drive(h, f, 0, steadyScrapes, nil)
	drive(h, f, steadyScrapes, steadyScrapes+12, func(int) { regress(f) })
	fs := h.findings()
	require.Len(t, fs, 1)
	assert.Equal(t, s.CauseUndetermined, fs[0].cause)
	assert.Equal(t, "cause=undetermined ttft_p95=0.78 ttft_baseline_p95=0.195", fs[0].evidence)
}

// Signals that would explain a regression raise nothing while latencies
// stay at the baseline: a full KV cache and a hot device on their own.
func TestSignalsWithoutRegressionRaiseNothing(t *testing.T) {
	h := newHarness(t, testConfig(), nil, component.NewIDWithName(metadata.Type, "busy"))
	defer h.shutdown()
	f := twoReplicas()
	drive(h, f, 0, steadyScrapes, nil)
	drive(h, f, steadyScrapes, steadyScrapes+afterScrapes, func(int) {
		for _, sv := range f.servers {
			sv.kv, sv.preemptPerScrape = 0.99, 5
		}
		f.gpus[0].sm, f.gpus[0].thermalThrottle = 0.99, 1
	})
	assert.Empty(t, h.findings())
}

// A regression before the baseline is warm is not judged: a new endpoint
// has no normal yet.
func TestNoJudgementBeforeBaseline(t *testing.T) {
	h := newHarness(t, testConfig(), nil, component.NewIDWithName(metadata.Type, "cold"))
	defer h.shutdown()
	f := twoReplicas()
	drive(h, f, 0, 8, nil)
	drive(h, f, 8, 20, func(int) { regress(f) })
	assert.Empty(t, h.findings())
}

// Unhealthy devices outrank the KV cache they slow: both present, the
// device is the cause and the KV cache is listed as also present.
func TestStrongestCauseWithOthersListed(t *testing.T) {
	h := newHarness(t, testConfig(), nil, component.NewIDWithName(metadata.Type, "both"))
	defer h.shutdown()
	f := twoReplicas()
	drive(h, f, 0, steadyScrapes, nil)
	ld := plog.NewLogs()
	record(ld, at(steadyScrapes*step), s.EventECCUncorrected, map[string]any{s.AttrHWID: "GPU-B"}, nil)
	h.sendLogs(ld)
	drive(h, f, steadyScrapes, steadyScrapes+12, func(int) {
		regress(f)
		for _, sv := range f.servers {
			sv.kv, sv.preemptPerScrape = 0.95, 2
		}
	})
	fs := h.findings()
	require.Len(t, fs, 1)
	assert.Equal(t, s.CauseUnhealthyDevice, fs[0].cause)
	assert.Contains(t, fs[0].evidence, "ecc_uncorrected=1")
	assert.Equal(t, s.CauseKVCachePressure, fs[0].also)
}

// Logs pass through untouched, records of every kind.
func TestLogsPassThrough(t *testing.T) {
	h := newHarness(t, testConfig(), nil, component.NewIDWithName(metadata.Type, "pass"))
	defer h.shutdown()
	ld := plog.NewLogs()
	record(ld, at(0), s.EventXID, map[string]any{s.AttrHWID: "GPU-A"}, map[string]any{s.AttrXID: int64(79)})
	record(ld, at(0), "something.else", map[string]any{}, nil)
	h.sendLogs(ld)
	require.Len(t, h.lout.AllLogs(), 1)
	assert.Equal(t, 2, h.lout.AllLogs()[0].LogRecordCount())
}

// A device's readings that arrive ahead of its servers' (another receiver,
// another batch) are still there when the servers' window is judged.
func TestDeviceReadingsAheadOfTheServers(t *testing.T) {
	h := newHarness(t, testConfig(), nil, component.NewIDWithName(metadata.Type, "ahead"))
	defer h.shutdown()
	f := twoReplicas()
	servers, gpus := &fleet{servers: f.servers}, &fleet{gpus: f.gpus}
	const ahead = 6 // scrapes: a window and a half
	for i := 0; i < steadyScrapes+12; i++ {
		if i >= steadyScrapes {
			regress(f)
		}
		if i+ahead >= steadyScrapes {
			f.gpus[1].thermalThrottle = 1
		}
		h.sendMetrics(gpus.batch(at(time.Duration(i+ahead) * step)))
		h.sendMetrics(servers.batch(at(time.Duration(i) * step)))
	}
	fs := h.findings()
	require.NotEmpty(t, fs)
	assert.Equal(t, s.CauseThrottling, fs[0].cause)
}
