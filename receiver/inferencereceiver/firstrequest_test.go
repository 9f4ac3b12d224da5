package inferencereceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/firstrequest"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

const idleVLLM = `# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0
`

// TestFirstRequestIsRecordedForThePod: the scrape that first sees a
// finished request records it for the pod, once; a server that has served
// none records nothing.
func TestFirstRequestIsRecordedForThePod(t *testing.T) {
	reg := firstrequest.New()
	srv := newFakeServer(t, idleVLLM)
	cfg := configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM,
		Pod: PodConfig{Name: "vllm-0", Namespace: "serve", UID: "uid-vllm-0"}})
	h := newHarness(t, cfg, func(o *options) { o.firstRequests = reg })
	assert.True(t, reg.HasProducer())

	h.scrape(t)
	_, ok := reg.First("uid-vllm-0")
	assert.False(t, ok, "no request finished yet")

	srv.serve(200, readFixture(t, "vllm_v1.txt"))
	h.clock.advance(15 * time.Second)
	served := h.clock.now
	h.scrape(t)
	got, ok := reg.First("uid-vllm-0")
	require.True(t, ok)
	assert.Equal(t, served, got)

	h.clock.advance(15 * time.Second)
	h.scrape(t)
	got, _ = reg.First("uid-vllm-0")
	assert.Equal(t, served, got, "the first one stays")
}
