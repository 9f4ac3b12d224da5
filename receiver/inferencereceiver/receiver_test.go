package inferencereceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/metadata"
)

// The receiver as the collector builds it: factory, scraper controller,
// consumer. Scrapes are driven by a ticker the test owns.
func TestReceiverThroughFactory(t *testing.T) {
	srv := newFakeServer(t, readFixture(t, "vllm_v1.txt"))
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Targets = []TargetConfig{{Endpoint: srv.URL}}
	cfg.InitialDelay = 0
	require.NoError(t, cfg.Validate())

	sink := new(consumertest.MetricsSink)
	tick := make(chan time.Time)
	r, err := newReceiver(receivertest.NewNopSettings(metadata.Type), cfg, sink, defaultOptions(), scraperhelperTicker(tick))
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))

	require.Eventually(t, func() bool { return sink.DataPointCount() > 0 }, 10*time.Second, 5*time.Millisecond)
	srv.serve(200, readFixture(t, "vllm_v1_later.txt"))
	tick <- time.Now()
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) >= 2 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, r.Shutdown(context.Background()))

	first, second := flatten(sink.AllMetrics()[0]), flatten(sink.AllMetrics()[1])
	assert.Equal(t, "vllm", first.resources[0].Attributes().AsRaw()["gen_ai.provider.name"], "detected")
	assert.Equal(t, int64(queries1), first.intValue(t, "gen_ai.server.prefix_cache.queries", ""))
	assert.Equal(t, int64(queries2), second.intValue(t, "gen_ai.server.prefix_cache.queries", ""))
	assert.Equal(t, 1, second.count("gen_ai.server.prefix_cache.hit_ratio"))
}
