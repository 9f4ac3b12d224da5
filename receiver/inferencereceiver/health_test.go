package inferencereceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
)

func TestHealthReportsOncePerScrapeAndSaysWhatItHeldBack(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	h := newHealth(zap.New(core), time.Minute)
	host := &componenthealthtest.Host{}
	now := time.Unix(0, 0)

	// One scrape, two targets down: one status event naming both.
	h.fail("pod-a", "http://10.0.0.1:8000/metrics", "unreachable: connection refused", now)
	h.fail("pod-b", "http://10.0.0.2:8000/metrics", "answered HTTP 503", now)
	h.report(host)
	require.Len(t, host.Events(), 1)
	assert.EqualError(t, host.Last().Err(),
		"http://10.0.0.1:8000/metrics: unreachable: connection refused; http://10.0.0.2:8000/metrics: answered HTTP 503")

	// Still down every 15 s for a minute: no new status, one reminder.
	for i := 1; i <= 4; i++ {
		now = now.Add(15 * time.Second)
		h.fail("pod-a", "http://10.0.0.1:8000/metrics", "unreachable: i/o timeout", now)
		h.report(host)
	}
	assert.Len(t, host.Events(), 1, "a changed reason is no new report")
	var msgs []string
	for _, e := range logs.FilterMessageSnippet("cannot be scraped").All() {
		msgs = append(msgs, e.Message)
	}
	assert.Equal(t, []string{
		"Inference server cannot be scraped; other targets are still scraped, this one is retried every collection interval",
		"Inference server cannot be scraped; other targets are still scraped, this one is retried every collection interval",
		"Inference server still cannot be scraped (3 similar messages suppressed in the last 1m0s)",
	}, msgs)

	// pod-b goes away, pod-a recovers: OK, and the recovery is logged.
	h.forget("pod-b")
	h.ok("pod-a", now)
	h.report(host)
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}, host.Statuses())
	assert.Equal(t, 1, logs.FilterMessage("Inference server scraped again").Len())

	// A note about a pod that was forgotten is logged at once when it comes back.
	h.note("pod-c", "input", now, "Skipped unreadable input")
	h.note("pod-c", "input", now, "Skipped unreadable input")
	h.forget("pod-c")
	h.note("pod-c", "input", now, "Skipped unreadable input")
	assert.Equal(t, 2, logs.FilterMessage("Skipped unreadable input").Len())
}

func TestHealthWaitsForTheHost(t *testing.T) {
	h := newHealth(zap.NewNop(), time.Minute)
	now := time.Unix(0, 0)
	h.fail("kubernetes", "Kubernetes API", "node_name is empty", now)
	h.report(nil) // before Start
	host := &componenthealthtest.Host{}
	h.report(host)
	require.Len(t, host.Events(), 1)
	assert.EqualError(t, host.Last().Err(), "Kubernetes API: node_name is empty")
}
