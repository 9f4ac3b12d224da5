package inferencereceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// Each fixture is one server's real exposition format, served on loopback;
// the receiver's output is compared with a golden file. The same output must
// come out whether the kind is configured or detected.
func TestGoldenPerServer(t *testing.T) {
	tests := []struct {
		fixture string
		server  string
		model   string
	}{
		{fixture: "vllm_v1", server: normalize.VLLM},
		{fixture: "vllm_v0_v1_mix", server: normalize.VLLM},
		{fixture: "vllm_v0", server: normalize.VLLM},
		{fixture: "vllm_custom_buckets", server: normalize.VLLM},
		{fixture: "sglang", server: normalize.SGLang},
		{fixture: "sglang_legacy", server: normalize.SGLang},
		{fixture: "triton", server: normalize.Triton},
		{fixture: "tgi", server: normalize.TGI, model: "HuggingFaceH4/zephyr-7b-beta"},
		{fixture: "nim", server: normalize.NIM},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			srv := newFakeServer(t, readFixture(t, tt.fixture+".txt"))
			for _, server := range []string{tt.server, ServerAuto} {
				h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL + "/metrics", Server: server, Model: tt.model}))
				md := h.scrape(t)
				compareGolden(t, tt.fixture, md)
				assert.Empty(t, h.logs.All(), "a clean scrape logs nothing")
				assert.Empty(t, h.host.Statuses(), "a clean scrape reports no status change")
			}
		})
	}
}

// TestV1NamesWinOverDeprecated checks the mix fixture, in which vLLM exposes
// the deprecated names beside the V1 ones with different values: the V1
// values come out, once.
func TestV1NamesWinOverDeprecated(t *testing.T) {
	srv := newFakeServer(t, readFixture(t, "vllm_v0_v1_mix.txt"))
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	md := h.scrape(t)
	got := flatten(md)

	// Per-request TPOT (96 requests), not the per-step deprecated
	// histogram, which counts one observation per generated token.
	tpot := got.histogram(t, "gen_ai.server.time_per_output_token")
	itl := got.histogram(t, "gen_ai.server.inter_token_latency")
	assert.Equal(t, uint64(96), tpot.Count())
	assert.Greater(t, itl.Count(), uint64(96*10))
	assert.Equal(t, 1, got.count("gen_ai.server.time_per_output_token"))
	assert.Equal(t, 1, got.count("gen_ai.server.prefix_cache.queries"))
	assert.Equal(t, 1, got.count("gen_ai.server.kv_cache.utilization"))
}

// TestEnginesAggregated: two data-parallel vLLM engines become one series per
// model; counters and histograms add, KV-cache use averages.
func TestEnginesAggregated(t *testing.T) {
	srv := newFakeServer(t, readFixture(t, "vllm_v1.txt"))
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	got := flatten(h.scrape(t))
	assert.Equal(t, int64(26), got.intValue(t, "gen_ai.server.requests.running", ""))
	assert.Equal(t, int64(3), got.intValue(t, "gen_ai.server.requests.waiting", ""))
	assert.InDelta(t, (0.4123+0.3871)/2, got.doubleValue(t, "gen_ai.server.kv_cache.utilization", ""), 1e-12)
	assert.Equal(t, int64(268777+249880), got.intValue(t, "gen_ai.server.tokens", "input"))
	assert.Equal(t, int64(182+162), got.intValue(t, "gen_ai.server.requests", "stop"))
	assert.Equal(t, uint64(412), got.histogram(t, "gen_ai.server.request.duration").Count())
	require.Len(t, got.resources, 1)
}
