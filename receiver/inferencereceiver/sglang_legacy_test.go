package inferencereceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// TestSGLangLegacy reads SGLang from before its metric renames
// (testdata/sglang_legacy.txt): the model comes from name=, the percentage
// hit rate becomes a ratio, the queue is queue_req, and the last prefill
// batch's token gauges feed no token or prefix-cache counter. The values
// are the fixture's own.
func TestSGLangLegacy(t *testing.T) {
	srv := newFakeServer(t, readFixture(t, "sglang_legacy.txt"))
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.SGLang}))
	got := flatten(h.scrape(t))

	require.Len(t, got.resources, 1)
	model, ok := got.resources[0].Attributes().Get("gen_ai.request.model")
	require.True(t, ok)
	assert.Equal(t, "Qwen/Qwen2-7B-Instruct", model.Str())

	assert.InDelta(t, 0.1061, got.doubleValue(t, "gen_ai.server.prefix_cache.hit_ratio", ""), 1e-15, "10.61 %")
	assert.Equal(t, int64(12), got.intValue(t, "gen_ai.server.requests.running", ""))
	assert.Equal(t, int64(4), got.intValue(t, "gen_ai.server.requests.waiting", ""), "queue_req, not num_requests_waiting (3)")
	assert.InDelta(t, 0.42, got.doubleValue(t, "gen_ai.server.kv_cache.utilization", ""), 1e-15)
	assert.Equal(t, int64(68332), got.intValue(t, "gen_ai.server.tokens", "input"))
	assert.Equal(t, int64(13343), got.intValue(t, "gen_ai.server.tokens", "output"))
	assert.Equal(t, uint64(48), got.histogram(t, "gen_ai.server.time_to_first_token").Count())
	assert.Equal(t, uint64(48), got.histogram(t, "gen_ai.server.request.duration").Count())

	tokens := got.metrics["gen_ai.server.tokens"]
	require.Len(t, tokens, 1)
	assert.Equal(t, 2, tokens[0].Sum().DataPoints().Len(), "input and output only: new_token and cached_token are per-batch gauges")
	assert.Zero(t, got.count("gen_ai.server.prefix_cache.hits"))
	assert.Zero(t, got.count("gen_ai.server.prefix_cache.queries"))
	assert.Zero(t, got.count("gen_ai.server.queue.duration"), "waiting_request_latency_seconds is not mapped")
}
