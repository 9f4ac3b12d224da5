package acceleratorinsightsexporter

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
)

// Every answer, page or API, error or not, carries the security headers.
func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "headers")
	c.feed(t, fixture.Now)
	for _, path := range []string{"/", "/device", "/teams?team=x", "/index.html", "/api/v1/fleet", "/api/v1/nope", "/missing.js", "/api/v1/device?id=none"} {
		resp, _ := c.get(t, path)
		h := resp.Header
		assert.Equal(t, contentSecurityPolicy, h.Get("Content-Security-Policy"), path)
		assert.Contains(t, h.Get("Content-Security-Policy"), "frame-ancestors 'none'", path)
		assert.Contains(t, h.Get("Content-Security-Policy"), "default-src 'self'", path)
		assert.NotContains(t, h.Get("Content-Security-Policy"), "unsafe-inline", path)
		assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), path)
		assert.Equal(t, "DENY", h.Get("X-Frame-Options"), path)
		assert.Empty(t, h.Get("Access-Control-Allow-Origin"), path)
	}
}

// The console's pages are index.html under any route; a missing asset is
// 404, not the page.
func TestStaticRoutes(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "static")
	index, _ := c.get(t, "/")
	require.Equal(t, http.StatusOK, index.StatusCode)
	require.Contains(t, index.Header.Get("Content-Type"), "text/html")
	for _, page := range []string{"/fleet", "/device", "/findings", "/reliability"} {
		resp, body := c.get(t, page)
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		require.Contains(t, string(body), "<html", page)
	}
	resp, _ := c.get(t, "/no-such-file.js")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, body := c.get(t, "/api/v1/nothing-here")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Contains(t, string(body), `"error"`)
	// Only GET and HEAD reach the pages.
	r, _ := c.post(t, "/", nil, "")
	require.Equal(t, http.StatusMethodNotAllowed, r.StatusCode)
}

func firstFinding(t *testing.T, c *console) string {
	t.Helper()
	var list struct {
		Findings []struct {
			ID string `json:"id"`
		} `json:"findings"`
	}
	c.getJSON(t, "/api/v1/findings", &list)
	require.NotEmpty(t, list.Findings)
	return list.Findings[0].ID
}

// A POST is refused unless it is same-origin and carries the session's
// token; the read-only API refuses every other write.
func TestPostNeedsSameOriginAndToken(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "csrf")
	c.feed(t, fixture.Now)
	id := firstFinding(t, c)
	path := "/api/v1/findings/" + id + "/acknowledge"
	host := strings.TrimPrefix(c.url, "http://")
	cases := []struct {
		name   string
		header map[string]string
		want   int
		says   string
	}{
		{"no token", nil, http.StatusForbidden, "X-Insights-CSRF"},
		{"wrong token", map[string]string{csrfHeader: "guess"}, http.StatusForbidden, "X-Insights-CSRF"},
		{"other site", map[string]string{csrfHeader: c.token, "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden, "cross-site"},
		{"same site, other origin", map[string]string{csrfHeader: c.token, "Sec-Fetch-Site": "same-site"}, http.StatusForbidden, "same-site"},
		{"other origin", map[string]string{csrfHeader: c.token, "Origin": "http://evil.example"}, http.StatusForbidden, "evil.example"},
		{"same origin", map[string]string{csrfHeader: c.token, "Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}, http.StatusOK, `"acknowledged"`},
		{"a script (no browser headers)", map[string]string{csrfHeader: c.token}, http.StatusOK, `"acknowledged"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := c.post(t, path, tc.header, "")
			require.Equal(t, tc.want, resp.StatusCode, "%s", body)
			require.Contains(t, string(body), tc.says)
		})
	}
	for _, p := range []string{"/api/v1/fleet", "/api/v1/findings", "/api/v1/device?id=GPU-A0"} {
		resp, _ := c.post(t, p, map[string]string{csrfHeader: c.token}, "")
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, p)
	}
	req, err := http.NewRequest(http.MethodDelete, c.url+path, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	// A preflight is never approved.
	req, err = http.NewRequest(http.MethodOptions, c.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
}

// Acknowledge, dismiss and reopen change what /findings and /fleet count;
// a dismissed finding leaves the default list.
func TestFindingStates(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "states")
	c.feed(t, fixture.Now)
	id := firstFinding(t, c)
	hdr := map[string]string{csrfHeader: c.token}
	resp, body := c.post(t, "/api/v1/findings/"+id+"/dismiss", hdr, `{"note":"known, replacing Tuesday"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var f struct {
		State string `json:"state"`
		Note  string `json:"note"`
	}
	require.NoError(t, json.Unmarshal(body, &f))
	require.Equal(t, "dismissed", f.State)
	require.Equal(t, "known, replacing Tuesday", f.Note)
	var fleetSum struct {
		Findings struct {
			Open      int `json:"open"`
			Dismissed int `json:"dismissed"`
		} `json:"findings"`
	}
	c.getJSON(t, "/api/v1/fleet", &fleetSum)
	require.Equal(t, 2, fleetSum.Findings.Open)
	require.Equal(t, 1, fleetSum.Findings.Dismissed)
	var list struct {
		Total int `json:"total"`
	}
	c.getJSON(t, "/api/v1/findings", &list)
	require.Equal(t, 2, list.Total)
	c.getJSON(t, "/api/v1/findings?state=dismissed", &list)
	require.Equal(t, 1, list.Total)

	resp, _ = c.post(t, "/api/v1/findings/"+id+"/reopen", hdr, "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	c.getJSON(t, "/api/v1/findings", &list)
	require.Equal(t, 3, list.Total)

	resp, _ = c.post(t, "/api/v1/findings/f-000000000000/acknowledge", hdr, "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = c.post(t, "/api/v1/findings/"+id+"/delete", hdr, "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = c.post(t, "/api/v1/findings/"+id+"/acknowledge", hdr, "{not json")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, _ = c.post(t, "/api/v1/findings/"+id+"/acknowledge", hdr, `{"note":"`+strings.Repeat("x", 2000)+`"}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
}

// Bad query parameters are 400 with a message naming them.
func TestBadRequests(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "bad")
	c.feed(t, fixture.Now)
	for path, says := range map[string]string{
		"/api/v1/fleet?colour=red":        "colour",
		"/api/v1/devices?page=0":          "page",
		"/api/v1/devices?page_size=10000": "page_size",
		"/api/v1/device":                  "id",
		"/api/v1/reliability?window=1y":   "window",
		"/api/v1/findings?state=closed":   "state",
		"/api/v1/pod?namespace=llm":       "name",
	} {
		resp, body := c.get(t, path)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, path)
		require.Contains(t, string(body), says, path)
	}
	resp, body := c.get(t, "/api/v1/device?id=GPU-NOPE")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Contains(t, string(body), "GPU-NOPE")
	resp, _ = c.get(t, "/api/v1/pod?namespace=x&name=y")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
