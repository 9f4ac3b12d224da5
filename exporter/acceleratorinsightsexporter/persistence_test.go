package acceleratorinsightsexporter

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"

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
