package acceleratorinsightsexporter

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
)

// The keeper rebuilds when the model changed and makes the answers the
// last view was asked for before the swap: the next request is answered
// from the new view without computing anything. Without a change (and
// well within maxStale) it leaves the view alone.
func TestKeeperRebuildsOnChangeWithTheAnswersMade(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "keeper")
	c.feed(t, fixture.Now)
	var before struct {
		GeneratedAt time.Time `json:"generated_at"`
	}
	c.getJSON(t, "/api/v1/fleet", &before)
	require.Equal(t, fixture.Now, before.GeneratedAt)
	c.e.api.wait() // the keeper stops; it is driven by hand below

	// Nothing changed: no rebuild, however often the keeper looks.
	c.clock.set(fixture.Now.Add(2 * time.Second))
	c.e.api.keepCurrent()
	c.e.api.refreshes.Wait()
	c.e.api.mu.Lock()
	require.Equal(t, fixture.Now, c.e.api.viewAt, "unchanged sources: the view stays")
	c.e.api.mu.Unlock()

	// A batch arrives: the keeper rebuilds, with /api/v1/fleet made.
	later := fixture.Now.Add(30 * time.Second)
	c.clock.set(later)
	c.e.consumeMetrics(fixture.Metrics(later))
	c.e.api.keepCurrent()
	c.e.api.refreshes.Wait()
	c.e.api.mu.Lock()
	require.Equal(t, later, c.e.api.viewAt)
	body, warmed := c.e.api.answers["/api/v1/fleet?"]
	c.e.api.mu.Unlock()
	require.True(t, warmed, "the answer the last view was asked for is made before the swap")
	var made struct {
		GeneratedAt time.Time `json:"generated_at"`
	}
	require.NoError(t, json.Unmarshal(body, &made))
	require.Equal(t, later, made.GeneratedAt, "made from the new view")
	_, got := c.get(t, "/api/v1/fleet")
	require.Equal(t, string(body), string(got))
}

// A write re-reads the logs side only: the next request sees the new state
// from the same snapshot (the fleet is not rebuilt).
func TestWriteReusesTheFleetOfTheView(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "relog")
	c.feed(t, fixture.Now)
	c.get(t, "/api/v1/fleet")
	c.e.api.mu.Lock()
	groups := c.e.api.view.Groups
	c.e.api.mu.Unlock()
	id := firstFinding(t, c)
	resp, body := c.post(t, "/api/v1/findings/"+id+"/dismiss", map[string]string{csrfHeader: c.token}, "")
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	var list struct {
		Findings []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"findings"`
	}
	c.getJSON(t, "/api/v1/findings?state=all", &list)
	found := false
	for _, f := range list.Findings {
		if f.ID == id {
			found = true
			require.Equal(t, "dismissed", f.State)
		}
	}
	require.True(t, found)
	c.e.api.mu.Lock()
	defer c.e.api.mu.Unlock()
	require.Equal(t, &groups[0], &c.e.api.view.Groups[0], "the write's view shares the fleet's groups")
}
