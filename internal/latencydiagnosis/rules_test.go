package latencydiagnosis

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

var baseline = Baseline{TTFT: 0.20, ITL: 0.020, Samples: 60}

// healthy is an endpoint under steady load: latencies at its baseline, a
// KV cache at 60 %, a short queue below the limit, a busy but unsaturated
// device, nothing throttled, broken or shared.
func healthy() Signals {
	return Signals{
		TTFT: 0.21, ITL: 0.021, HasTTFT: true, HasITL: true,
		KVCache: 0.6, HasKVCache: true,
		Waiting: 0, Running: 40, MaxRunning: 256, HasQueue: true,
		SMActive: 0.55, TensorActive: 0.40, HasActivity: true,
		HasThrottle: true, Replicas: 4,
	}
}

// regressed is healthy with TTFT doubled.
func regressed(change func(*Signals)) Signals {
	s := healthy()
	s.TTFT = 0.45
	if change != nil {
		change(&s)
	}
	return s
}

func TestSteadyHealthyEndpointHasNoFinding(t *testing.T) {
	_, ok := Diagnose(healthy(), baseline, DefaultThresholds)
	assert.False(t, ok)
	// Busy but within its baseline: the signals alone are no finding.
	s := healthy()
	s.KVCache, s.Preemptions, s.SMActive = 0.97, 2, 0.95
	_, ok = Diagnose(s, baseline, DefaultThresholds)
	assert.False(t, ok, "no regression, no diagnosis")
}

func TestRegressionNeedsABaselineAndARealRise(t *testing.T) {
	_, ok := Diagnose(regressed(nil), Baseline{TTFT: 0.2, ITL: 0.02, Samples: 3}, DefaultThresholds)
	assert.False(t, ok, "too few windows make no baseline")
	fast := Baseline{TTFT: 0.02, ITL: 0.002, Samples: 60}
	s := healthy()
	s.TTFT, s.ITL = 0.05, 0.004 // 2.5× and 2× a fast baseline, but only 30 ms and 2 ms more
	_, ok = Diagnose(s, fast, DefaultThresholds)
	assert.False(t, ok, "jitter of a fast endpoint is no regression")
	s = healthy()
	s.ITL = 0.045
	d, ok := Diagnose(s, baseline, DefaultThresholds)
	require.True(t, ok, "ITL alone regresses")
	assert.Contains(t, d.Evidence, "itl_p95=0.045")
	assert.Equal(t, accelschema.CauseUndetermined, d.Cause, "no rule's evidence: no cause asserted")
}

// Each rule: the signal that must trigger it, and the same signal just
// short of its threshold, which must not.
func TestEachRuleFiresOnItsEvidenceOnly(t *testing.T) {
	for _, c := range []struct {
		cause     string
		must, not func(*Signals)
		evidence  string
	}{
		{accelschema.CauseKVCachePressure,
			func(s *Signals) { s.KVCache, s.Preemptions = 0.93, 0.5 },
			func(s *Signals) { s.KVCache, s.Preemptions = 0.93, 0 }, // high, but nothing preempted and not full
			"kv_cache_usage=0.93 preemptions_per_s=0.5"},
		{accelschema.CauseQueueing,
			func(s *Signals) { s.Waiting, s.Running = 12, 250 },
			func(s *Signals) { s.Waiting, s.Running = 12, 200 }, // waiting, but the server is below its limit
			"requests_waiting=12 requests_running=250 max_running=256"},
		{accelschema.CauseDeviceSaturation,
			func(s *Signals) { s.SMActive = 0.96 },
			func(s *Signals) { s.SMActive = 0.85 },
			"sm_active=0.96"},
		{accelschema.CauseThrottling,
			func(s *Signals) { s.ThermalThrottle = 0.4 },
			func(s *Signals) { s.ThermalThrottle = 0.1 },
			"throttle_thermal=0.4"},
		{accelschema.CauseUnhealthyDevice,
			func(s *Signals) { s.XIDs = 2 },
			func(s *Signals) { s.XIDs = 0 },
			"xid_events=2"},
		{accelschema.CauseNoisyNeighbour,
			func(s *Signals) { s.Shared, s.NeighbourActivity = true, 0.5 },
			func(s *Signals) { s.Shared, s.NeighbourActivity = false, 0.5 }, // busy others, but the device is not shared
			"neighbour_activity=0.5"},
		{accelschema.CauseColdReplica,
			func(s *Signals) { s.ColdReplicas, s.Replicas = 2, 6 },
			func(s *Signals) { s.ColdReplicas = 0 },
			"cold_replicas=2 replicas=6"},
		{accelschema.CauseZoneImbalance,
			func(s *Signals) { s.ZoneImbalance = "replicas_us-east-1a=3 replicas_us-east-1b=0" },
			func(s *Signals) { s.ZoneImbalance = "" },
			"replicas_us-east-1a=3"},
	} {
		t.Run(c.cause, func(t *testing.T) {
			d, ok := Diagnose(regressed(c.must), baseline, DefaultThresholds)
			require.True(t, ok)
			assert.Equal(t, c.cause, d.Cause)
			assert.Contains(t, d.Evidence, "ttft_p95=0.45 ttft_baseline_p95=0.2")
			assert.Contains(t, d.Evidence, c.evidence)
			assert.NotEmpty(t, d.Action)
			d, ok = Diagnose(regressed(c.not), baseline, DefaultThresholds)
			require.True(t, ok)
			assert.NotEqual(t, c.cause, d.Cause)
			assert.NotContains(t, d.Also, c.cause)
		})
	}
}

func TestKVCacheFullWithoutPreemptions(t *testing.T) {
	d, _ := Diagnose(regressed(func(s *Signals) { s.KVCache = 0.99 }), baseline, DefaultThresholds)
	assert.Equal(t, accelschema.CauseKVCachePressure, d.Cause)
}

func TestUnmeasuredSignalsAreNotRead(t *testing.T) {
	d, _ := Diagnose(regressed(func(s *Signals) {
		s.HasKVCache, s.KVCache, s.Preemptions = false, 0.99, 3
		s.HasActivity, s.SMActive = false, 1
	}), baseline, DefaultThresholds)
	assert.Equal(t, accelschema.CauseUndetermined, d.Cause)
}

// When several causes have evidence, the strongest names the finding and
// the others are listed: a failing device before the KV cache it slows.
func TestStrongestCauseWinsOthersListed(t *testing.T) {
	d, ok := Diagnose(regressed(func(s *Signals) {
		s.KVCache, s.Preemptions = 0.95, 1
		s.ECC = 1
		s.ColdReplicas = 1
	}), baseline, DefaultThresholds)
	require.True(t, ok)
	assert.Equal(t, accelschema.CauseUnhealthyDevice, d.Cause)
	assert.Equal(t, []string{accelschema.CauseKVCachePressure, accelschema.CauseColdReplica}, d.Also)
	assert.Contains(t, d.Evidence, "ecc_uncorrected=1")
	assert.NotContains(t, d.Evidence, "kv_cache_usage", "the evidence is the cause's")
}

// The rules' other edges: the signal present but not enough, or a limit the
// rule needs unknown.
func TestRulesDoNotFireShortOfTheirEvidence(t *testing.T) {
	for name, c := range map[string]struct {
		change func(*Signals)
		not    string
	}{
		"queue without a known limit":          {func(s *Signals) { s.Waiting, s.Running, s.MaxRunning = 30, 256, 0 }, accelschema.CauseQueueing},
		"a full server with nobody waiting":    {func(s *Signals) { s.Waiting, s.Running = 0.5, 256 }, accelschema.CauseQueueing},
		"a quiet neighbour on a shared device": {func(s *Signals) { s.Shared, s.NeighbourActivity = true, 0.29 }, accelschema.CauseNoisyNeighbour},
		"throttle readings not measured":       {func(s *Signals) { s.HasThrottle, s.PowerThrottle = false, 1 }, accelschema.CauseThrottling},
		"tensor activity just below":           {func(s *Signals) { s.TensorActive = 0.79 }, accelschema.CauseDeviceSaturation},
		"a KV cache just short of full":        {func(s *Signals) { s.KVCache = 0.97 }, accelschema.CauseKVCachePressure},
	} {
		t.Run(name, func(t *testing.T) {
			d, ok := Diagnose(regressed(c.change), baseline, DefaultThresholds)
			require.True(t, ok)
			assert.NotEqual(t, c.not, d.Cause)
			assert.NotContains(t, d.Also, c.not)
		})
	}
	d, _ := Diagnose(regressed(func(s *Signals) { s.PowerThrottle = 0.5 }), baseline, DefaultThresholds)
	assert.Equal(t, accelschema.CauseThrottling, d.Cause, "power throttling counts like thermal")
	assert.Contains(t, d.Evidence, "throttle_power=0.5")
	d, _ = Diagnose(regressed(func(s *Signals) { s.TensorActive = 0.85 }), baseline, DefaultThresholds)
	assert.Equal(t, accelschema.CauseDeviceSaturation, d.Cause, "saturated tensor cores alone")
}

// An endpoint whose normal swings (bursty traffic) is judged against its
// swing: a window within baseline + Deviations × spread is no regression,
// one beyond it is; and a rise that stays inside the histogram bucket the
// baseline falls in is below what the histogram can tell.
func TestRegressionBeyondTheNormalSwingAndTheBucket(t *testing.T) {
	swinging := Baseline{TTFT: 1.0, TTFTSpread: 1.3, ITL: 0.02, Samples: 60}
	s := healthy()
	s.TTFT = 4.5 // 4.5× the mean, but within 1.0 + 3 × 1.3
	_, ok := Diagnose(s, swinging, DefaultThresholds)
	assert.False(t, ok, "a burst within the endpoint's own swing")
	s.TTFT = 5.5
	d, ok := Diagnose(s, swinging, DefaultThresholds)
	require.True(t, ok, "beyond the swing")
	assert.Contains(t, d.Evidence, "ttft_p95=5.5 ttft_baseline_p95=1 ttft_baseline_spread=1.3")

	bucketed := Baseline{TTFT: 0.12, TTFTBucketTop: 0.25, ITL: 0.02, Samples: 60}
	s = healthy()
	s.TTFT = 0.23 // 1.9× and 110 ms more, but in the same (0.1, 0.25] bucket
	_, ok = Diagnose(s, bucketed, DefaultThresholds)
	assert.False(t, ok, "inside the baseline's bucket: the histogram cannot tell")
	s.TTFT = 0.3
	_, ok = Diagnose(s, bucketed, DefaultThresholds)
	assert.True(t, ok, "in the next bucket")
}
