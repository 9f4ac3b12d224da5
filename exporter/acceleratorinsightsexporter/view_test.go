package acceleratorinsightsexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
)

// A view older than a second is still answered from while one rebuild runs
// in the background; the next request after it sees the new one. A write
// (acknowledge) is seen by the very next request.
func TestStaleViewIsAnsweredWhileItRebuilds(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "stale")
	c.feed(t, fixture.Now)
	var first, second, third struct {
		GeneratedAt time.Time `json:"generated_at"`
	}
	c.getJSON(t, "/api/v1/fleet", &first)
	require.Equal(t, fixture.Now, first.GeneratedAt)

	later := fixture.Now.Add(2 * time.Second)
	c.clock.set(later)
	c.getJSON(t, "/api/v1/fleet", &second)
	require.Equal(t, fixture.Now, second.GeneratedAt, "answered from the previous view")
	c.e.api.wait() // the background rebuild
	c.getJSON(t, "/api/v1/fleet", &third)
	require.Equal(t, later, third.GeneratedAt)

	id := firstFinding(t, c)
	resp, body := c.post(t, "/api/v1/findings/"+id+"/acknowledge", map[string]string{csrfHeader: c.token}, "")
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	var list struct {
		Findings []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"findings"`
	}
	c.getJSON(t, "/api/v1/findings", &list)
	for _, f := range list.Findings {
		if f.ID == id {
			require.Equal(t, "acknowledged", f.State)
		}
	}
}
