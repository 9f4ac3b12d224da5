package acceleratorinsightsexporter

import (
	"context"
	"net/http"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
)

// extensionHost is a component.Host with running extensions, as the
// collector's service gives one.
type extensionHost struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h extensionHost) GetExtensions() map[component.ID]component.Component { return h.ext }

// startFileStorage runs the contrib file_storage extension over dir.
func startFileStorage(t *testing.T, dir string) (extension.Extension, component.ID) {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	id := component.NewID(f.Type())
	set := extensiontest.NewNopSettings(f.Type())
	set.ID = id
	ext, err := f.Create(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	return ext, id
}

// A finding dismissed in one run is still dismissed after a restart over
// the same file_storage directory, and one acknowledged too; the findings
// themselves come back with the agents' next reports.
func TestDecisionsSurviveRestartThroughFileStorage(t *testing.T) {
	dir := t.TempDir()
	var dismissed, acked string
	run := func(first bool) map[string]string {
		ext, extID := startFileStorage(t, dir)
		defer func() { require.NoError(t, ext.Shutdown(context.Background())) }()
		cfg := testConfig()
		cfg.Storage = &extID
		states := map[string]string{}
		// The console stops before its storage extension, as in the
		// collector (deferred calls run last-in first-out).
		c := startConsoleNoCleanup(t, cfg, extensionHost{componenttest.NewNopHost(), map[component.ID]component.Component{extID: ext}}, "restart")
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
