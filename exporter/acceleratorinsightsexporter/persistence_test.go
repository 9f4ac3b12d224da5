package acceleratorinsightsexporter

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
	"github.com/otelcol-accel/otelcol-accel/internal/filestoragetest"
)

// A finding dismissed in one run is still dismissed after a restart over
// the same file_storage directory, and one acknowledged too; the findings
// themselves come back with the agents' next reports.
func TestDecisionsSurviveRestartThroughFileStorage(t *testing.T) {
	dir := t.TempDir()
	var dismissed, acked string
	run := func(first bool) map[string]string {
		ext, extID := filestoragetest.StartNoCleanup(t, dir)
		defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()
		cfg := testConfig()
		cfg.Storage = &extID
		states := map[string]string{}
		// The console stops before its storage extension, as in the
		// collector (deferred calls run last-in first-out).
		c := startConsoleNoCleanup(t, cfg, &componenthealthtest.Host{Extensions: map[component.ID]component.Component{extID: ext}}, "restart")
		defer c.stop(t)
		c.feed(t, fixture.Now)
		if first {
			var list struct {
				Findings []struct {
					ID string `json:"id"`
				} `json:"findings"`
			}
			c.getJSON(t, "/api/v1/findings", &list)
			require.Len(t, list.Findings, 3)
			dismissed, acked = list.Findings[0].ID, list.Findings[1].ID
			hdr := map[string]string{csrfHeader: c.token}
			resp, body := c.post(t, "/api/v1/findings/"+dismissed+"/dismiss", hdr, "")
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			resp, body = c.post(t, "/api/v1/findings/"+acked+"/acknowledge", hdr, `{"note":"ticket OPS-12"}`)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		}
		var all struct {
			Findings []struct {
				ID    string `json:"id"`
				State string `json:"state"`
			} `json:"findings"`
		}
		c.getJSON(t, "/api/v1/findings?state=all", &all)
		for _, f := range all.Findings {
			states[f.ID] = f.State
		}
		return states
	}
	before := run(true)
	after := run(false)
	require.Equal(t, "dismissed", before[dismissed])
	require.Equal(t, "acknowledged", before[acked])
	require.Equal(t, before, after)
}

// A decision outlives its finding for logs.decision_retention, across
// restarts, and then goes from the storage too: a finding that comes back
// after that is open again.
func TestDecisionsOfGoneFindingsArePrunedAfterTheRetention(t *testing.T) {
	dir := t.TempDir()
	var dismissed string
	run := func(at time.Time, fn func(c *console)) {
		ext, extID := filestoragetest.StartNoCleanup(t, dir)
		defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()
		cfg := testConfig()
		cfg.Storage = &extID
		c := startConsoleNoCleanup(t, cfg, &componenthealthtest.Host{Extensions: map[component.ID]component.Component{extID: ext}}, "prune")
		defer c.stop(t)
		c.clock.set(at)
		fn(c)
	}
	// Run 1: the finding is raised and dismissed.
	run(fixture.Now, func(c *console) {
		c.feed(t, fixture.Now)
		dismissed = firstFinding(t, c)
		resp, body := c.post(t, "/api/v1/findings/"+dismissed+"/dismiss", map[string]string{csrfHeader: c.token}, "")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	})
	// Run 2, 29 days on, the finding not raised since: still kept.
	run(fixture.Now.Add(29*24*time.Hour), func(c *console) {
		c.e.consumeLogs(plog.NewLogs())
		require.Contains(t, c.e.logs.Decisions(), dismissed)
	})
	// Run 3, 31 days on: dropped, and from the storage.
	run(fixture.Now.Add(31*24*time.Hour), func(c *console) {
		require.Contains(t, c.e.logs.Decisions(), dismissed, "loaded from the storage")
		c.e.consumeLogs(plog.NewLogs())
		require.NotContains(t, c.e.logs.Decisions(), dismissed)
	})
	// Run 4: the finding comes back, open.
	later := fixture.Now.Add(32 * 24 * time.Hour)
	run(later, func(c *console) {
		require.Empty(t, c.e.logs.Decisions(), "the storage no longer holds it")
		c.feed(t, later)
		var all struct {
			Findings []struct {
				ID    string `json:"id"`
				State string `json:"state"`
			} `json:"findings"`
		}
		c.getJSON(t, "/api/v1/findings?state=all", &all)
		found := false
		for _, f := range all.Findings {
			if f.ID == dismissed {
				found = true
				require.Equal(t, "open", f.State)
			}
		}
		require.True(t, found)
	})
}
