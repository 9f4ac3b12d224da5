package hostguard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func serve(t *testing.T, g *Guard, host, origin string) (int, string) {
	t.Helper()
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "reached") }))
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r.Host = host
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

func TestLoopbackNamesOnTheListenersPortOnly(t *testing.T) {
	g, err := New(Config{}, "8686", "test console", zap.NewNop())
	require.NoError(t, err)
	for _, host := range []string{"localhost:8686", "LocalHost:8686", "127.0.0.1:8686", "[::1]:8686", "localhost", "127.0.0.1", "[::1]"} {
		code, body := serve(t, g, host, "")
		assert.Equal(t, http.StatusOK, code, host)
		assert.Equal(t, "reached", body, host)
	}
	for _, host := range []string{"evil.example:8686", "evil.example", "localhost:9000", "127.0.0.2:8686", "localhost.:8686",
		"0.0.0.0:8686", "", "localhost:8686@evil", "[::1", "127.0.0.1:8686:1"} {
		code, body := serve(t, g, host, "")
		assert.Equal(t, http.StatusMisdirectedRequest, code, host)
		assert.NotContains(t, body, "reached", host)
		assert.Contains(t, body, "allowed_hosts", host)
	}
}

func TestAllowedHostsAddNamesAndPorts(t *testing.T) {
	g, err := New(Config{AllowedHosts: []string{"insights.example.com", "localhost:9000", "fd00::1", "[fd00::2]:443"}}, "8686", "c", zap.NewNop())
	require.NoError(t, err)
	for _, host := range []string{"insights.example.com", "insights.example.com:8686", "localhost:9000", "[fd00::1]:8686", "[fd00::1]", "[fd00::2]:443"} {
		code, _ := serve(t, g, host, "")
		assert.Equal(t, http.StatusOK, code, host)
	}
	for _, host := range []string{"insights.example.com:9000", "localhost:9001", "[fd00::2]:8686", "[fd00::2]", "sub.insights.example.com"} {
		code, _ := serve(t, g, host, "")
		assert.Equal(t, http.StatusMisdirectedRequest, code, host)
	}
}

// The rebinding attack of issue 36: the attacker's name with the attacker's
// origin (which equals its Host) is refused; so is the attacker's origin on
// an allowed Host (a plain cross-site request), and a "null" origin.
func TestOriginIsCheckedAgainstAllowedOriginsNeverTheRequestsHost(t *testing.T) {
	g, err := New(Config{AllowedHosts: []string{"insights.example.com"}, AllowedOrigins: []string{"https://portal.example.com"}}, "8686", "c", zap.NewNop())
	require.NoError(t, err)
	cases := []struct {
		host, origin string
		want         int
	}{
		{"evil.example:8686", "http://evil.example:8686", http.StatusMisdirectedRequest},
		{"localhost:8686", "http://evil.example:8686", http.StatusForbidden},
		{"localhost:8686", "null", http.StatusForbidden},
		{"localhost:8686", "http://localhost:9000", http.StatusForbidden},
		{"localhost:8686", "https://portal.example.com:444", http.StatusForbidden},
		{"localhost:8686", "http://localhost:8686", http.StatusOK},
		{"127.0.0.1:8686", "http://127.0.0.1:8686", http.StatusOK},
		{"insights.example.com", "https://insights.example.com", http.StatusOK},
		{"localhost:8686", "https://portal.example.com", http.StatusOK},
		{"localhost:8686", "HTTPS://Portal.Example.com", http.StatusOK},
	}
	for _, tc := range cases {
		code, body := serve(t, g, tc.host, tc.origin)
		assert.Equal(t, tc.want, code, "Host %s Origin %s: %s", tc.host, tc.origin, body)
	}
}

func TestConfigValidateNamesTheBadEntry(t *testing.T) {
	err := Config{AllowedHosts: []string{"http://x.example", "x.example:port", ""}, AllowedOrigins: []string{"x.example", "ftp://x", "https://x/path"}}.Check()
	require.Error(t, err)
	for _, s := range []string{`"http://x.example"`, `"x.example:port"`, `allowed_hosts: ""`, `"x.example"`, `"ftp://x"`, `"https://x/path"`} {
		assert.Contains(t, err.Error(), s)
	}
	require.NoError(t, Config{AllowedHosts: []string{"a.example", "a.example:1", "[::1]:2", "::1"}, AllowedOrigins: []string{"https://a.example:8443"}}.Check())
	_, err = New(Config{AllowedHosts: []string{"/x"}}, "1", "c", zap.NewNop())
	require.Error(t, err)
}

// Every refusal is counted and logged, rate-limited: nothing is dropped
// without a word.
func TestRefusalsAreCountedAndLogged(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	g, err := New(Config{}, "8686", "test console", zap.New(core))
	require.NoError(t, err)
	for range 3 {
		serve(t, g, "evil.example:8686", "")
	}
	serve(t, g, "localhost:8686", "http://evil.example")
	assert.EqualValues(t, 4, g.Refused())
	entries := logs.All()
	require.Len(t, entries, 2, "one line per reason within the minute")
	assert.True(t, strings.Contains(entries[0].Message, "test console"))
	assert.Contains(t, entries[0].ContextMap()["reason"], "evil.example:8686")
	assert.Contains(t, entries[1].ContextMap()["reason"], "Origin")
}
