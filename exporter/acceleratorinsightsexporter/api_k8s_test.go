package acceleratorinsightsexporter

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
)

// feedK8s adds the fixture's Kubernetes side (accelerator_k8s and the
// latency diagnosis) through the same pipelines' entry points.
func (c *console) feedK8s(t *testing.T, end time.Time) {
	t.Helper()
	c.e.k8s.SetClock(c.clock.now)
	c.e.consumeMetrics(fixture.K8sMetrics(end))
	c.e.consumeLogs(fixture.K8sLogs(end))
	c.e.api.invalidate()
}

var lifecycleGoldenPaths = []string{
	"/api/v1/lifecycle",
	"/api/v1/lifecycle?zone=us-east-1b",
	"/api/v1/lifecycle?namespace=research",
}

// The lifecycle view on the fixture: cold-start anatomy per workload,
// the scaling, replicas and request rate per zone (the endpoint's node is
// in us-east-1a), the unschedulable pod, the latency regression's cause.
func TestGoldenLifecycle(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "lifecycle")
	c.feed(t, fixture.Now)
	c.feedK8s(t, fixture.Now)
	for _, path := range lifecycleGoldenPaths {
		t.Run(path, func(t *testing.T) {
			resp, body := c.get(t, path)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			checkGolden(t, path, body)
		})
	}
	var got lifecycleAnswer
	c.getJSON(t, "/api/v1/lifecycle", &got)
	require.Len(t, got.ColdStarts.ByWorkload, 1)
	w := got.ColdStarts.ByWorkload[0]
	assert.Equal(t, uint64(2), w.ColdStarts)
	require.Len(t, w.Phases, 6, "every phase, in order")
	assert.Equal(t, "scheduling", w.Phases[0].Phase)
	assert.Equal(t, 87.55, *w.Phases[5].Mean, "total: (110.1 + 65) / 2")
	require.Len(t, got.Zones, 1)
	assert.True(t, got.Zones[0].Imbalanced, "3/0 is what the finding says")
	require.Len(t, got.Zones[0].Zones, 2)
	assert.Equal(t, 10.0, *got.Zones[0].Zones[0].RequestRate, "the endpoint's 10 req/s are in its node's zone")
	assert.Nil(t, got.Zones[0].Zones[1].RequestRate)
	assert.Equal(t, int64(1), got.Unschedulable.Pods, "the series at 0 is dropped")
	require.Len(t, got.LatencyRegressions, 1)
	assert.Equal(t, "kv_cache_pressure", got.LatencyRegressions[0].Cause)
	assert.Equal(t, "10.0.0.5:8000", got.LatencyRegressions[0].Endpoint)

	// Balanced again: the last finding no longer describes the zones.
	md := fixture.K8sMetrics(fixture.Now.Add(time.Minute))
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		m := rms.At(i).ScopeMetrics().At(0).Metrics().At(0)
		if m.Name() == "accelerator.k8s.workload.replicas" {
			m.Gauge().DataPoints().At(0).SetIntValue(2)
		}
	}
	c.clock.set(fixture.Now.Add(time.Minute))
	c.e.consumeMetrics(md)
	c.e.api.invalidate()
	c.getJSON(t, "/api/v1/lifecycle", &got)
	assert.False(t, got.Zones[0].Imbalanced, "2/2 is balanced: %+v", got.Zones[0].Zones)

	resp, body := c.get(t, "/api/v1/lifecycle?colour=red")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
}
