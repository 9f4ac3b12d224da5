package acceleratorinsightsexporter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/promstore"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// A scrape of the gateway that fails (here: HTTP 500; on a loaded machine: a
// scrape past its timeout) makes Prometheus mark every series of the target
// stale, and for a moment every instant query succeeds with nothing. Such a
// round must not become the console's view: the last good view is kept,
// the failure is logged (rate-limited) and said in the session and in a
// header on every answer, until a round finds the fleet again.
func TestPrometheusIncompleteRoundKeepsTheLastGoodView(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	var failing atomic.Bool
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if failing.Load() {
			http.Error(w, "gateway overloaded", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, renderPage(t, fixture.Metrics(time.Now())))
	}))
	defer page.Close()
	prom := e2etest.StartPrometheus(t, e2etest.PrometheusOptions{Targets: []string{strings.TrimPrefix(page.URL, "http://")}, ScrapeInterval: time.Second})
	// Start-up waits on Prometheus's own answers, not on time.
	waitFor := func(what, expr string, ok func(n int) bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		for {
			samples, err := prom.Query(ctx, expr)
			if err == nil && ok(len(samples)) {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: %v %v\n%s", what, samples, err, prom.Output())
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	const status = `hw_status{hw_id!=""} == 1`
	waitFor("prometheus has the fleet", status, func(n int) bool { return n > 0 })

	cfg := testConfig()
	cfg.Backend = BackendPrometheus
	cfg.Prometheus.Endpoint = prom.URL
	cfg.RateWindow = 10 * time.Second
	c := startConsole(t, cfg, nil, "incomplete")
	zc, warnings := observer.New(zap.WarnLevel)
	c.e.api.warn = componenthealth.NewLogger(zap.New(zc), time.Minute)
	at := time.Now()
	c.clock.set(at)

	type fleetAnswer struct {
		GeneratedAt time.Time `json:"generated_at"`
		Devices     struct {
			Total int `json:"total"`
		} `json:"devices"`
		Cost struct {
			PerHour float64 `json:"per_hour"`
		} `json:"cost"`
	}
	get := func() (fleetAnswer, string) {
		t.Helper()
		resp, body := c.get(t, "/api/v1/fleet")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		var f fleetAnswer
		require.NoError(t, json.Unmarshal(body, &f))
		return f, resp.Header.Get(problemHeader)
	}
	good, problem := get()
	require.Positive(t, good.Devices.Total)
	require.Positive(t, good.Cost.PerHour)
	require.Empty(t, problem)

	failing.Store(true)
	waitFor("the failed scrape is recorded", `up == 0`, func(n int) bool { return n == 1 })
	waitFor("the fleet's series are stale", status, func(n int) bool { return n == 0 })

	// Prometheus answers such a round successfully, with nothing in it: a
	// store that never saw the fleet takes it for an empty one.
	snap, err := promstore.New(http.DefaultClient, prom.URL, cfg.RateWindow, time.Second, nil).Snapshot(context.Background())
	require.NoError(t, err)
	for _, r := range snap.Resources {
		require.Empty(t, r.Health, "no device has hw.status in this round")
	}

	// The view is due a background rebuild: that round is incomplete and
	// keeps the last good view.
	at = at.Add(2 * time.Second)
	c.clock.set(at)
	f, _ := get()
	require.Equal(t, good.Devices.Total, f.Devices.Total)
	c.e.api.wait()
	f, problem = get()
	require.Equal(t, good.Devices.Total, f.Devices.Total, "an incomplete round replaced the view")
	require.InDelta(t, good.Cost.PerHour, f.Cost.PerHour, 1e-9)
	require.Equal(t, good.GeneratedAt, f.GeneratedAt, "the answer is the last good view, and says when it was made")
	require.Contains(t, problem, "incomplete answer")

	// Past maxStale the view is rebuilt before answering; failing too, it
	// still answers from the last good one.
	at = at.Add(maxStale + time.Second)
	c.clock.set(at)
	f, problem = get()
	require.Equal(t, good.Devices.Total, f.Devices.Total)
	require.Contains(t, problem, "incomplete answer")
	var sess struct {
		Problem string     `json:"backend_problem"`
		Since   *time.Time `json:"backend_problem_since"`
	}
	c.getJSON(t, "/api/v1/session", &sess)
	require.Contains(t, sess.Problem, "incomplete answer")
	require.NotNil(t, sess.Since)

	// Logged once for the two failed rounds (rate-limited by key).
	warned := warnings.FilterMessageSnippet("last good view").All()
	require.Len(t, warned, 1, "%v", warnings.All())
	require.Contains(t, fmt.Sprint(warned[0].ContextMap()["error"]), "incomplete answer")

	// The gateway answers again: the next round is the fleet, and the
	// problem is gone.
	failing.Store(false)
	waitFor("the fleet is scraped again", status, func(n int) bool { return n > 0 })
	at = at.Add(2 * time.Second)
	c.clock.set(at)
	get()
	c.e.api.wait()
	f, problem = get()
	require.Equal(t, good.Devices.Total, f.Devices.Total)
	require.Empty(t, problem)
	require.True(t, f.GeneratedAt.After(good.GeneratedAt))
	c.getJSON(t, "/api/v1/session", &sess)
	require.Empty(t, sess.Problem)
	require.Nil(t, sess.Since)
}
