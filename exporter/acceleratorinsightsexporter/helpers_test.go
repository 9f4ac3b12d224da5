package acceleratorinsightsexporter

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/metadata"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// clock is a settable time for the model and the API.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// console is a started exporter, as the collector starts it: the factory's
// metrics and logs exporters (one shared instance), its server on a free
// loopback port.
type console struct {
	e     *insightsExporter
	url   string
	clock *clock
	token string
	// authorization goes on every request (a console behind an auth
	// extension).
	authorization string
	stops         []func(context.Context) error
}

func exporterSettings(t testing.TB, f exporter.Factory, name string) exporter.Settings {
	t.Helper()
	set := exportertest.NewNopSettings(metadata.Type)
	set.ID = component.NewIDWithName(f.Type(), name)
	return set
}

func testConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.NetAddr.Endpoint = "127.0.0.1:0"
	return cfg
}

func startConsole(t testing.TB, cfg *Config, host component.Host, name string) *console {
	t.Helper()
	c := startConsoleNoCleanup(t, cfg, host, name)
	t.Cleanup(func() { c.stop(t) })
	return c
}

// stop shuts the console down as the collector does: every pipeline's
// exporter.
func (c *console) stop(t testing.TB) {
	t.Helper()
	for _, s := range c.stops {
		require.NoError(t, s(context.Background()))
	}
	c.stops = nil
}

func startConsoleNoCleanup(t testing.TB, cfg *Config, host component.Host, name string) *console {
	t.Helper()
	return startConsoleWith(t, cfg, host, name, exportertest.NewNopSettings(metadata.Type))
}

// startConsoleWith starts a console with these settings (a telemetry to
// read its own metrics from).
func startConsoleWith(t testing.TB, cfg *Config, host component.Host, name string, set exporter.Settings) *console {
	t.Helper()
	return startConsoleAuthorized(t, cfg, host, name, set, "")
}

// startConsoleAuthorized starts a console whose requests carry this
// Authorization header.
func startConsoleAuthorized(t testing.TB, cfg *Config, host component.Host, name string, set exporter.Settings, authorization string) *console {
	t.Helper()
	if host == nil {
		host = componenttest.NewNopHost()
	}
	f := NewFactory()
	set.ID = component.NewIDWithName(metadata.Type, name)
	me, err := f.CreateMetrics(context.Background(), set, cfg)
	require.NoError(t, err)
	le, err := f.CreateLogs(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, me.Start(context.Background(), host))
	require.NoError(t, le.Start(context.Background(), host))
	e := me.(metricsExporter).Unwrap()
	c := &console{e: e, url: "http://" + loopbackAddr(e.Addr()), clock: &clock{t: fixture.Now}, authorization: authorization,
		stops: []func(context.Context) error{me.Shutdown, le.Shutdown}}
	e.api.now = c.clock.now
	if e.mem != nil {
		e.mem.SetClock(c.clock.now)
	}
	var sess struct {
		Token string `json:"csrf_token"`
	}
	c.getJSON(t, "/api/v1/session", &sess)
	c.token = sess.Token
	return c
}

// feed sends the fixture at three times ending at end, 30 s apart, as the
// agents would, and sets the clock to end.
func (c *console) feed(t *testing.T, end time.Time) {
	t.Helper()
	for i := 2; i >= 0; i-- {
		at := end.Add(-time.Duration(i) * 30 * time.Second)
		c.clock.set(at)
		c.e.consumeMetrics(fixture.Metrics(at))
	}
	c.e.consumeLogs(fixture.Logs(end))
	c.clock.set(end)
	c.e.api.invalidate()
}

// loopbackAddr is where a test reaches a listener: 127.0.0.1 on its port
// when it listens on every interface.
func loopbackAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && (host == "0.0.0.0" || host == "::") {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

func (c *console) get(t testing.TB, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.url+path, nil)
	require.NoError(t, err)
	if c.authorization != "" {
		req.Header.Set("Authorization", c.authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

func (c *console) getJSON(t testing.TB, path string, v any) {
	t.Helper()
	resp, body := c.get(t, path)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
	require.NoError(t, json.Unmarshal(body, v), "%s", body)
}

func (c *console) post(t *testing.T, path string, header map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url+path, strings.NewReader(body))
	require.NoError(t, err)
	if c.authorization != "" {
		req.Header.Set("Authorization", c.authorization)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, data
}

// goldenName turns a request path into a file name.
func goldenName(path string) string {
	u, _ := url.Parse(path)
	name := strings.TrimPrefix(u.Path, "/api/v1/")
	if u.RawQuery != "" {
		q := strings.NewReplacer("=", "-", "&", "_", "/", "~", "%2F", "~").Replace(u.RawQuery)
		name += "_" + q
	}
	return filepath.Join("testdata", "golden", strings.ReplaceAll(name, "/", "~")+".json")
}

// checkGolden compares a JSON answer with its golden file (indented),
// rewriting it with -update.
func checkGolden(t *testing.T, path string, body []byte) {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(body, &v), "%s", body)
	pretty, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	pretty = append(pretty, '\n')
	file := goldenName(path)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, pretty, 0o644))
		return
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err, "no golden file for %s (run go test -update)", path)
	require.JSONEq(t, string(want), string(pretty), "%s differs from %s (go test -update rewrites it after review)", path, file)
}
