package acceleratordiagnosisprocessor

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/plog"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/findingtext"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratordiagnosisprocessor/internal/metadata"
)

// A baseline is learned from steady traffic only (README, "What a baseline
// learns from"). These tests drive the start-up ramp, a new endpoint, a
// scale event and bursts of traffic, each with latencies that would read
// as a regression against a baseline learned from them, and a real
// regression after them, which must still fire.

// baselineOf is the endpoint's TTFT baseline and its sample count.
func baselineOf(t *testing.T, id component.ID, workload string) (float64, int) {
	t.Helper()
	c, err := instances.LoadOrStore(id, nil)
	require.NoError(t, err)
	p := c.Unwrap()
	p.mu.Lock()
	defer p.mu.Unlock()
	k := baselineKey(signalTTFT)
	k.Workload = "chat/" + workload
	v, n, _ := p.baselines.Get(k)
	return v, n
}

// requireOneRegression is the one finding a real regression must raise,
// with its cause and the window's TTFT against the steady baseline.
func requireOneRegression(t *testing.T, h *harness, cause string) regressionFinding {
	t.Helper()
	fs := h.findings()
	require.Len(t, fs, 1, "the real regression after the warm-up fires once")
	assert.Equal(t, cause, fs[0].cause)
	assert.Contains(t, fs[0].evidence, "ttft_p95=0.78 ttft_baseline_p95=0.195", "judged against the steady baseline")
	return fs[0]
}

// The start-up ramp: servers that start cold (slow first tokens) and
// traffic that ramps up over several minutes. Neither the warm-up windows
// nor the ramp's windows (rates outside the typical traffic) are learned
// from or judged; the steady windows after them are the baseline.
func TestStartUpRampIsNotBaseline(t *testing.T) {
	id := component.NewIDWithName(metadata.Type, "ramp")
	h := newHarness(t, testConfig(), nil, id)
	defer h.shutdown()
	f := twoReplicas()
	ramp := []struct {
		requests uint64
		ttft     float64
	}{{3, 0.7}, {3, 0.7}, {10, 0.35}, {30, 0.15}} // per scrape, for a window each
	for w, r := range ramp {
		for _, sv := range f.servers {
			sv.requests, sv.ttftValue = r.requests, r.ttft
		}
		drive(h, f, 4*w, 4*w+4, nil)
	}
	drive(h, f, 16, 16+4*8, nil) // eight steady windows
	assert.Empty(t, h.findings(), "the ramp is no regression, and the steady windows none against it")
	v, n := baselineOf(t, id, "vllm-llama")
	assert.InDelta(t, 0.195, v, 1e-9, "the baseline is the steady windows' alone")
	assert.Less(t, n, 9, "the warm-up and ramp windows are not in it")

	drive(h, f, 48, 60, func(int) { regress(f) })
	requireOneRegression(t, h, s.CauseUndetermined)
}

// A new endpoint appearing while the collector runs: its first minutes
// (cold caches, CUDA graphs being captured) are slow, and are not its
// baseline; an endpoint already running is not disturbed.
func TestNewEndpointFirstMinutesAreNotBaseline(t *testing.T) {
	id := component.NewIDWithName(metadata.Type, "new")
	h := newHarness(t, testConfig(), nil, id)
	defer h.shutdown()
	old := twoReplicas()
	drive(h, old, 0, steadyScrapes, nil)
	fresh := onNode(newServer("pod-n"), "node-c")
	fresh.workload, fresh.start = "vllm-new", at(steadyScrapes*step)
	fresh.ttftValue = 0.7
	both := &fleet{servers: append(append([]*server{}, old.servers...), fresh), gpus: old.gpus}
	drive(h, both, steadyScrapes, steadyScrapes+8, nil) // its first two minutes: cold
	fresh.ttftValue = 0.15
	drive(h, both, steadyScrapes+8, steadyScrapes+40, nil)
	assert.Empty(t, h.findings())
	v, _ := baselineOf(t, id, "vllm-new")
	assert.InDelta(t, 0.195, v, 1e-9, "the cold start is not the new endpoint's normal")

	from := steadyScrapes + 40
	drive(h, both, from, from+12, func(int) { fresh.ttftValue = 0.6 })
	got := requireOneRegression(t, h, s.CauseUndetermined)
	assert.Equal(t, "chat/vllm-new", got.res[s.AttrInferenceEndpoint])
}

// A scale event — a pod added, with the Kubernetes side's cold start and
// scaling events, or a pod gone with none — settles: its windows are still
// judged (the cold replica is the cause of what it slows) but not learned
// from, so the baseline is unchanged through it; after the settling period
// the baseline learns again.
func TestScaleEventIsNotBaseline(t *testing.T) {
	for _, withEvents := range []bool{true, false} {
		name := "pod appears, no events"
		if withEvents {
			name = "pod appears with cold start and scaling events"
		}
		t.Run(name, func(t *testing.T) {
			id := component.NewIDWithName(metadata.Type, strings.ReplaceAll(name, " ", "_"))
			cfg := testConfig()
			cfg.Baselines.Settle = 3 * time.Minute
			h := newHarness(t, cfg, nil, id)
			defer h.shutdown()
			f := twoReplicas()
			drive(h, f, 0, steadyScrapes, nil)
			v0, n0 := baselineOf(t, id, "vllm-llama")
			require.InDelta(t, 0.195, v0, 1e-9)

			// The same traffic spread over three pods; the new one serves a
			// little slower while it warms, then like the others.
			added := onNode(newServer("pod-c"), "node-c")
			added.start = at(steadyScrapes * step)
			for _, sv := range append(f.servers, added) {
				sv.requests = 20
			}
			added.ttftValue = 0.3
			f.servers = append(f.servers, added)
			if withEvents {
				ld := plog.NewLogs()
				record(ld, at(steadyScrapes*step), s.EventColdStart, withPod(workloadRes(), "pod-c"), map[string]any{s.ColdStartPhaseAttr(s.PhaseTotal): 95.0})
				record(ld, at(steadyScrapes*step), s.EventScaling, workloadRes(), map[string]any{
					s.AttrScalingFrom: int64(2), s.AttrScalingTo: int64(3), s.AttrScalingDirection: s.ScalingUp, s.AttrScalingOutcome: s.ScalingReady})
				h.sendLogs(ld)
			}
			drive(h, f, steadyScrapes, steadyScrapes+4, nil)
			added.ttftValue = 0.15
			drive(h, f, steadyScrapes+4, steadyScrapes+12, nil)
			v, n := baselineOf(t, id, "vllm-llama")
			assert.Equal(t, n0, n, "no window of the scale event is learned from")
			assert.InDelta(t, v0, v, 1e-9)
			for _, fd := range h.findings() {
				assert.Equal(t, s.CauseColdReplica, fd.cause, "only the cold replica explains a regression of the scale event")
			}

			drive(h, f, steadyScrapes+12, steadyScrapes+32, nil)
			_, n = baselineOf(t, id, "vllm-llama")
			assert.Greater(t, n, n0, "settled: the baseline learns again")
		})
	}
}

// Bursts of traffic — requests five times the typical rate, with the
// latency a near-full server has — are a change of traffic, not of the
// endpoint: not judged, not learned. A regression at steady traffic after
// them fires.
func TestTrafficBurstIsNotARegression(t *testing.T) {
	h := newHarness(t, testConfig(), nil, component.NewIDWithName(metadata.Type, "burst"))
	defer h.shutdown()
	f := twoReplicas()
	drive(h, f, 0, steadyScrapes, nil)
	i := steadyScrapes
	for burst := 0; burst < 3; burst++ {
		drive(h, f, i, i+8, func(int) {
			for _, sv := range f.servers {
				sv.requests, sv.ttftValue = 150, 3
			}
		})
		drive(h, f, i+8, i+24, func(int) {
			for _, sv := range f.servers {
				sv.requests, sv.ttftValue = 30, 0.15
			}
		})
		i += 24
	}
	assert.Empty(t, h.findings(), "bursts of traffic raise nothing")
	drive(h, f, i, i+12, func(int) { regress(f) })
	requireOneRegression(t, h, s.CauseUndetermined)
}

// A p95 that rests on too few requests is not judged: an endpoint of 80
// requests a window (4 in its tail, under min_tail) whose TTFT p95 jumps
// raises nothing, though its ITL (tokens, thousands) is still judged.
func TestATailOfAFewRequestsIsNotJudged(t *testing.T) {
	h := newHarness(t, testConfig(), nil, component.NewIDWithName(metadata.Type, "tail"))
	defer h.shutdown()
	f := twoReplicas()
	for _, sv := range f.servers {
		sv.requests = 10 // 80 a window
	}
	drive(h, f, 0, steadyScrapes, nil)
	drive(h, f, steadyScrapes, steadyScrapes+24, func(int) { regress(f) })
	assert.Empty(t, h.findings(), "TTFT p95 of 80 requests is not judged")
	drive(h, f, steadyScrapes+24, steadyScrapes+36, func(int) {
		for _, sv := range f.servers {
			sv.itlValue = 0.05
		}
	})
	fs := h.findings()
	require.Len(t, fs, 1, "ITL, thousands of tokens a window, is judged")
	assert.Contains(t, fs[0].evidence, "itl_p95=")
}

// One regressed window alone (the edge of a burst that stayed within the
// typical rate) is no finding: sustain windows in a row must regress.
func TestOneRegressedWindowIsNotSustained(t *testing.T) {
	h := newHarness(t, testConfig(), nil, component.NewIDWithName(metadata.Type, "spike"))
	defer h.shutdown()
	f := twoReplicas()
	drive(h, f, 0, steadyScrapes, nil)
	drive(h, f, steadyScrapes, steadyScrapes+4, func(int) { regress(f) })
	drive(h, f, steadyScrapes+4, steadyScrapes+24, func(int) {
		for _, sv := range f.servers {
			sv.ttftValue = 0.15
		}
	})
	assert.Empty(t, h.findings())
}

// A finding names where its endpoint runs and leaves no field empty: one
// node in k8s.node.name and the sentence, several counted and named in
// accelerator.finding.nodes and the sentence, none (outside Kubernetes)
// left out of the sentence rather than left blank.
func TestFindingNamesItsNodesAndLeavesNoFieldEmpty(t *testing.T) {
	for _, c := range []struct {
		name     string
		fleet    func() *fleet
		node     any
		nodes    string
		sentence string
	}{
		{"two nodes", twoReplicas, nil, "node-a,node-b", " on 2 nodes (node-a, node-b): "},
		{"one node", sharedGPU, "node-a", "", " on node-a: "},
		{"no node known", func() *fleet {
			f := twoReplicas()
			for _, sv := range f.servers {
				sv.node = ""
			}
			return f
		}, nil, "", "(meta-llama/Llama-3.1-8B-Instruct): "},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, testConfig(), nil, component.NewIDWithName(metadata.Type, strings.ReplaceAll(c.name, " ", "_")))
			defer h.shutdown()
			f := c.fleet()
			drive(h, f, 0, steadyScrapes, nil)
			drive(h, f, steadyScrapes, steadyScrapes+12, func(int) { regress(f) })
			fs := h.findings()
			require.Len(t, fs, 1)
			got := fs[0]
			assert.Equal(t, c.node, got.res[s.AttrK8sNodeName])
			assert.Equal(t, c.nodes, got.nodes)
			assert.Contains(t, got.body, c.sentence)
			for field, text := range map[string]string{"body": got.body, "evidence": got.evidence, "action": got.action} {
				assert.Empty(t, findingtext.EmptyFields(text), "%s: %q", field, text)
			}
		})
	}
}
