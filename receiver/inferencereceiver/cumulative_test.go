package inferencereceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// serverStart is T_START of testdata/gen/gen_fixtures.py: when the fixture
// servers' series were created.
var serverStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// The numbers below are read off the fixtures (two engines each).
const (
	queries1, hits1 = 268777 + 249880, 95458 + 90599  // vllm_v1.txt
	queries2, hits2 = 302459 + 278898, 106013 + 99973 // vllm_v1_later.txt
	queries3e0      = 320176                          // vllm_v1_engine1_restarted.txt, engine 0
	queries3e1      = 10569                           // … engine 1, restarted at serverStart+150s
	hits3e0, hits3  = 110219, 1682                    // … hits of engine 0 and engine 1
	requests2       = 243 + 227                       // e2e histogram count, later
	requests3e0     = 258                             // … engine 0 after engine 1's restart
	requests3e1     = 9                               // … engine 1 after its restart
)

func TestSecondScrapeKeepsStartAndDerivesHitRatio(t *testing.T) {
	srv := newFakeServer(t, readFixture(t, "vllm_v1.txt"))
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))

	first := flatten(h.scrape(t))
	assert.Zero(t, first.count("gen_ai.server.prefix_cache.hit_ratio"), "no ratio without a previous scrape")

	srv.serve(200, readFixture(t, "vllm_v1_later.txt"))
	h.clock.advance(15 * time.Second)
	second := flatten(h.scrape(t))

	q := second.number(t, "gen_ai.server.prefix_cache.queries", "")
	assert.Equal(t, int64(queries2), q.IntValue())
	assert.Equal(t, pcommon.NewTimestampFromTime(serverStart), q.StartTimestamp(), "start time from _created")
	assert.Equal(t, pcommon.NewTimestampFromTime(fixtureTime.Add(15*time.Second)), q.Timestamp())
	assert.InDelta(t, float64(hits2-hits1)/float64(queries2-queries1),
		second.doubleValue(t, "gen_ai.server.prefix_cache.hit_ratio", ""), 1e-12)
	assert.Equal(t, uint64(requests2), second.histogram(t, "gen_ai.server.request.duration").Count())
}

// TestEngineRestartStartsSeriesAgain: engine 1 of two restarts between
// scrapes. Its counters go back to zero; the series starts again at the
// previous scrape and counts only what both engines did since.
func TestEngineRestartStartsSeriesAgain(t *testing.T) {
	srv := newFakeServer(t, readFixture(t, "vllm_v1_later.txt"))
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	before := serverStart.Add(140 * time.Second)
	h.clock.now = before
	h.scrape(t)

	srv.serve(200, readFixture(t, "vllm_v1_engine1_restarted.txt"))
	h.clock.advance(20 * time.Second)
	got := flatten(h.scrape(t))

	q := got.number(t, "gen_ai.server.prefix_cache.queries", "")
	assert.Equal(t, int64((queries3e0-302459)+queries3e1), q.IntValue())
	assert.Equal(t, pcommon.NewTimestampFromTime(before.Add(time.Nanosecond)), q.StartTimestamp())

	d := got.histogram(t, "gen_ai.server.request.duration")
	assert.Equal(t, uint64((requests3e0-243)+requests3e1), d.Count())
	assert.Equal(t, pcommon.NewTimestampFromTime(before.Add(time.Nanosecond)), d.StartTimestamp())
	var inBuckets uint64
	for _, c := range d.BucketCounts().AsRaw() {
		inBuckets += c
	}
	assert.Equal(t, d.Count(), inBuckets)

	// Over the restarted interval the ratio counts both engines' new work.
	assert.InDelta(t, float64((hits3e0-106013)+hits3)/float64((queries3e0-302459)+queries3e1),
		got.doubleValue(t, "gen_ai.server.prefix_cache.hit_ratio", ""), 1e-12)

	// The next scrape continues the new run.
	h.clock.advance(15 * time.Second)
	next := flatten(h.scrape(t))
	q2 := next.number(t, "gen_ai.server.prefix_cache.queries", "")
	assert.Equal(t, q.StartTimestamp(), q2.StartTimestamp())
	assert.Equal(t, q.IntValue(), q2.IntValue())
	assert.Zero(t, next.count("gen_ai.server.prefix_cache.hit_ratio"), "no lookups in the interval, no ratio")
}

// TestServerRestartUsesCreated: a single-process server restarts; every
// series restarts, and the new start time is the servers' own _created.
func TestServerRestartUsesCreated(t *testing.T) {
	const older = `# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="m"} 5000.0
# TYPE vllm:prompt_tokens_created gauge
vllm:prompt_tokens_created{engine="0",model_name="m"} 1.7672256e+09
`
	const restarted = `# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="m"} 120.0
# TYPE vllm:prompt_tokens_created gauge
vllm:prompt_tokens_created{engine="0",model_name="m"} 1.767226205e+09
`
	srv := newFakeServer(t, older)
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	h.clock.now = serverStart.Add(600 * time.Second)
	first := flatten(h.scrape(t)).number(t, "gen_ai.server.tokens", "input")
	require.Equal(t, int64(5000), first.IntValue())

	srv.serve(200, restarted)
	h.clock.advance(15 * time.Second)
	got := flatten(h.scrape(t)).number(t, "gen_ai.server.tokens", "input")
	assert.Equal(t, int64(120), got.IntValue())
	assert.Equal(t, pcommon.NewTimestampFromTime(serverStart.Add(605*time.Second)), got.StartTimestamp())
}
