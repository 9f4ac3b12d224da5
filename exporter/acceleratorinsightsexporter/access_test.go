package acceleratorinsightsexporter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fixture"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kubeapi"
	"github.com/otelcol-accel/otelcol-accel/internal/senderauth"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorsenderprocessor"
)

// send makes one request to the console with the Host header of our
// choosing (what a DNS-rebinding page makes the browser send) and returns
// the status and body.
func (c *console) send(t *testing.T, method, path, host string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(""))
	require.NoError(t, err)
	req.Host = host
	if c.authorization != "" {
		req.Header.Set("Authorization", c.authorization)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// routeRequests turns the mux's patterns into requests: the pattern's
// method (a pattern without one is tried with GET and POST), its wildcards
// filled in with a real finding id and a real action.
func routeRequests(patterns []string, finding string) [][2]string {
	var out [][2]string
	for _, p := range patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "", p
		}
		path = strings.NewReplacer("{id}", finding, "{action}", "acknowledge").Replace(path)
		if strings.HasSuffix(path, "/") {
			path += "x"
		}
		if method == "" {
			out = append(out, [2]string{http.MethodGet, path}, [2]string{http.MethodPost, path})
			continue
		}
		out = append(out, [2]string{method, path})
	}
	return out
}

// A DNS-rebinding page reaches the console as evil.example: every route the
// mux serves (walked from its patterns, not listed here), reads and writes,
// with and without an Origin, with the session's real token, is refused
// with 421 before any handler runs, and the finding it tried to
// acknowledge stays open.
func TestDNSRebindingRefusedOnEveryRoute(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "rebinding")
	c.feed(t, fixture.Now)
	id := firstFinding(t, c)
	_, port, err := net.SplitHostPort(c.e.Addr())
	require.NoError(t, err)
	require.NotEmpty(t, c.e.routes)
	routes := routeRequests(c.e.routes, id)
	for _, host := range []string{"evil.example:8686", "evil.example:" + port, "evil.example"} {
		for _, origin := range []string{"", "http://" + host} {
			for _, rt := range routes {
				hdr := map[string]string{csrfHeader: c.token, "Sec-Fetch-Site": "same-origin"}
				if origin != "" {
					hdr["Origin"] = origin
				}
				code, body := c.send(t, rt[0], rt[1], host, hdr)
				require.Equal(t, http.StatusMisdirectedRequest, code, "%s %s Host %s Origin %q: %s", rt[0], rt[1], host, origin, body)
				assert.Contains(t, body, "allowed_hosts")
				assert.NotContains(t, body, c.token)
			}
		}
	}
	var list struct {
		Findings []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"findings"`
	}
	c.getJSON(t, "/api/v1/findings?state=all", &list)
	for _, f := range list.Findings {
		assert.Equal(t, "open", f.State, "finding %s changed state through a refused request", f.ID)
	}
	assert.GreaterOrEqual(t, c.e.guard.Refused(), int64(6*len(routes)))

	// The same routes through the names the console answers to are not
	// refused by the guard (whatever their own answer).
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port} {
		for _, rt := range routes {
			if rt[0] != http.MethodGet {
				continue
			}
			code, body := c.send(t, rt[0], rt[1], host, nil)
			assert.NotEqual(t, http.StatusMisdirectedRequest, code, "%s %s Host %s: %s", rt[0], rt[1], host, body)
		}
	}
	// An allowed Host with another site's Origin is refused on reads too.
	code, _ := c.send(t, http.MethodGet, "/api/v1/session", "127.0.0.1:"+port, map[string]string{"Origin": "http://evil.example:" + port})
	assert.Equal(t, http.StatusForbidden, code)
}

// The two commands of issue 36, as written there: the session read (which
// returned the CSRF token) and the approval with the attacker's Host and
// Origin, both refused.
func TestIssue36CommandsRefused(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "issue36")
	const h = "evil.example:8686"
	code, body := c.send(t, http.MethodGet, "/api/v1/session", h, nil)
	require.Equal(t, http.StatusMisdirectedRequest, code, body)
	require.NotContains(t, body, "csrf_token")
	// The attacker does not get the token; with the real one the
	// approval is still refused.
	code, body = c.send(t, http.MethodPost, "/api/v1/plans/rp-0123456789ab/approve", h,
		map[string]string{"Origin": "http://" + h, csrfHeader: c.token})
	require.Equal(t, http.StatusMisdirectedRequest, code, body)
}

// A console listening beyond loopback without an authenticator is
// read-only: it says so once in the log and in the session, and refuses
// every write, acknowledge and approve alike, even with the token and the
// right Origin.
func TestBeyondLoopbackWithoutAuthIsReadOnly(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	set := exportertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	cfg := testConfig()
	cfg.NetAddr.Endpoint = "0.0.0.0:0"
	c := startConsoleWith(t, cfg, nil, "readonly", set)
	t.Cleanup(func() { c.stop(t) })
	c.feed(t, fixture.Now)
	var sess struct {
		ReadOnly bool   `json:"read_only"`
		Reason   string `json:"read_only_reason"`
		User     string `json:"user"`
	}
	c.getJSON(t, "/api/v1/session", &sess)
	assert.True(t, sess.ReadOnly)
	assert.Contains(t, sess.Reason, "auth.authenticator")
	assert.Empty(t, sess.User)
	assert.Equal(t, 1, logs.FilterMessageSnippet("read-only").Len(), "said once: %v", logs.All())

	id := firstFinding(t, c)
	origin := map[string]string{csrfHeader: c.token, "Origin": c.url, "Sec-Fetch-Site": "same-origin"}
	resp, body := c.post(t, "/api/v1/findings/"+id+"/acknowledge", origin, "")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "read-only")
	resp, body = c.post(t, "/api/v1/plans/rp-0123456789ab/approve", origin, "")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "read-only")
	assert.Equal(t, 0, logs.FilterMessageSnippet("finding acknowledged").Len())
}

// allowed_hosts adds a name; the Origin of that name's pages is allowed with
// it, and allowed_origins adds a portal's.
func TestAllowedHostsConfigured(t *testing.T) {
	cfg := testConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"allowed_hosts":   []any{"insights.example.com"},
		"allowed_origins": []any{"https://portal.example.com"},
	}).Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	c := startConsole(t, cfg, nil, "allowed")
	c.feed(t, fixture.Now)
	id := firstFinding(t, c)
	code, body := c.send(t, http.MethodGet, "/api/v1/fleet", "insights.example.com", nil)
	assert.Equal(t, http.StatusOK, code, body)
	code, body = c.send(t, http.MethodPost, "/api/v1/findings/"+id+"/acknowledge", "insights.example.com",
		map[string]string{csrfHeader: c.token, "Origin": "https://insights.example.com"})
	assert.Equal(t, http.StatusOK, code, body)
	code, body = c.send(t, http.MethodPost, "/api/v1/findings/"+id+"/reopen", "insights.example.com",
		map[string]string{csrfHeader: c.token, "Origin": "https://portal.example.com"})
	assert.Equal(t, http.StatusOK, code, body)
	code, _ = c.send(t, http.MethodGet, "/api/v1/fleet", "other.example.com", nil)
	assert.Equal(t, http.StatusMisdirectedRequest, code)

	bad := testConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"allowed_hosts": []any{"https://x.example/"}}).Unmarshal(bad))
	require.ErrorContains(t, bad.Validate(), "allowed_hosts")
}

// extHost is a host that runs these extensions (the collector's).
type extHost struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h extHost) GetExtensions() map[component.ID]component.Component { return h.ext }

// bearerHost starts contrib's real bearertokenauth extension with these
// tokens and returns a host that has it.
func bearerHost(t *testing.T, tokens ...string) component.Host {
	t.Helper()
	f := bearertokenauthextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*bearertokenauthextension.Config)
	for _, tok := range tokens {
		cfg.Tokens = append(cfg.Tokens, configopaque.String(tok))
	}
	require.NoError(t, cfg.Validate())
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, ext.Shutdown(context.Background())) })
	return extHost{Host: componenttest.NewNopHost(), ext: map[component.ID]component.Component{component.NewID(f.Type()): ext}}
}

func tokenName(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return "bearertokenauth token sha256:" + hex.EncodeToString(sum[:6])
}

// authConfig is a console on every interface behind bearertokenauth.
func authConfig(t *testing.T) *Config {
	t.Helper()
	cfg := testConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"endpoint": "0.0.0.0:0",
		"auth":     map[string]any{"authenticator": "bearertokenauth"},
	}).Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	return cfg
}

// Behind the real bearertokenauth extension: no token, no answer (reads
// included); a token's holder acknowledges under the token's name, which
// the finding and the audit log record.
func TestAcknowledgeAuditsTheAuthenticatedIdentity(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	set := exportertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	c := startConsoleAuthorized(t, authConfig(t), bearerHost(t, "alice-token", "bob-token"), "bearer", set, "Bearer alice-token")
	t.Cleanup(func() { c.stop(t) })
	c.feed(t, fixture.Now)
	assert.Equal(t, 0, logs.FilterMessageSnippet("read-only").Len(), "an authenticated console is not read-only")

	var sess struct {
		ReadOnly bool   `json:"read_only"`
		User     string `json:"user"`
	}
	c.getJSON(t, "/api/v1/session", &sess)
	assert.False(t, sess.ReadOnly)
	assert.Equal(t, tokenName("alice-token"), sess.User)

	for _, auth := range []string{"", "Bearer mallory-token"} {
		anon := *c
		anon.authorization = auth
		resp, _ := anon.get(t, "/api/v1/session")
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "Authorization %q", auth)
	}

	id := firstFinding(t, c)
	resp, body := c.post(t, "/api/v1/findings/"+id+"/acknowledge", map[string]string{csrfHeader: c.token}, `{"note":"mine"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var f struct {
		State string `json:"state"`
		By    string `json:"state_changed_by"`
	}
	require.NoError(t, json.Unmarshal(body, &f))
	assert.Equal(t, "acknowledged", f.State)
	assert.Equal(t, tokenName("alice-token"), f.By)
	audit := logs.FilterMessage("accelerator_insights: finding acknowledged").All()
	require.Len(t, audit, 1)
	assert.Equal(t, tokenName("alice-token"), audit[0].ContextMap()["by"])
	assert.Equal(t, id, audit[0].ContextMap()["finding"])

	bob := *c
	bob.authorization = "Bearer bob-token"
	resp, body = bob.post(t, "/api/v1/findings/"+id+"/dismiss", map[string]string{csrfHeader: c.token}, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.NoError(t, json.Unmarshal(body, &f))
	assert.Equal(t, tokenName("bob-token"), f.By)
}

// startRemediationLocal runs the real accelerator_remediation exporter in
// approve mode on the simulator's Kubernetes API (one node, `node`), behind
// the real accelerator_sender check as a gateway runs it: the node agent's
// XID makes a plan that waits for an approval. Its audit log goes to
// logger.
func startRemediationLocal(t *testing.T, name, node string, logger *zap.Logger) (component.ID, func(t *testing.T, device string)) {
	t.Helper()
	ctx := context.Background()
	store, err := kubeapi.NewStore([]runtime.Object{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}})
	require.NoError(t, err)
	srv := kubeapi.NewServer(store)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, kubeapi.WriteKubeconfig(kubeconfig, hs.URL, "test"))

	f := acceleratorremediationexporter.NewFactory()
	cfg := f.CreateDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"mode": "approve", "interval": "20ms",
		"kubernetes":      map[string]any{"enabled": true, "auth_type": "kubeConfig", "kubeconfig": kubeconfig},
		"leader_election": map[string]any{"enabled": false},
	}).Unmarshal(cfg))
	require.NoError(t, cfg.(interface{ Validate() error }).Validate())
	set := exportertest.NewNopSettings(f.Type())
	set.ID = component.NewIDWithName(f.Type(), name)
	set.Logger = logger
	le, err := f.CreateLogs(ctx, set, cfg)
	require.NoError(t, err)
	require.NoError(t, le.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, le.Shutdown(context.Background())) })

	pf := acceleratorsenderprocessor.NewFactory()
	pcfg := pf.CreateDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"agent_service_accounts": []any{"otelcol-accel/otelcol-accel-agent"}}).Unmarshal(pcfg))
	lp, err := pf.CreateLogs(ctx, processortest.NewNopSettings(pf.Type()), pcfg, le)
	require.NoError(t, err)
	require.NoError(t, lp.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, lp.Shutdown(context.Background())) })
	return set.ID, func(t *testing.T, device string) {
		agent := senderauth.NewContext(ctx, senderauth.Identity{Username: "system:serviceaccount:otelcol-accel:otelcol-accel-agent",
			PodName: "otelcol-accel-agent-nvidia-x", NodeName: node})
		require.NoError(t, lp.ConsumeLogs(agent, xidEvent(node, device, time.Now())))
	}
}

// An approval through a console behind bearertokenauth is handed to the
// engine under the token's name: the answer, the plan and the remediator's
// audit record all carry it. Without a token it never reaches the engine.
func TestApprovalAuditsTheAuthenticatedIdentity(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	id, send := startRemediationLocal(t, "authed", "gpu-a1", zap.New(core))
	cfg := authConfig(t)
	cfg.Remediation = &id
	c := startConsoleAuthorized(t, cfg, bearerHost(t, "alice-token"), "authedplans", exportertest.NewNopSettings(metadata.Type), "Bearer alice-token")
	t.Cleanup(func() { c.stop(t) })

	send(t, "GPU-A1")
	got := waitPlans(t, c, "", func(a plansAnswer) bool { return a.AwaitingApproval == 1 })
	path := "/api/v1/plans/" + got.Plans[0].ID + "/approve"

	anon := *c
	anon.authorization = ""
	resp, body := anon.post(t, path, map[string]string{csrfHeader: c.token}, "")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s", body)

	resp, body = c.post(t, path, map[string]string{csrfHeader: c.token}, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var ok approveAnswer
	require.NoError(t, json.Unmarshal(body, &ok))
	assert.Equal(t, tokenName("alice-token"), ok.ApprovedBy)

	done := waitPlans(t, c, "", func(a plansAnswer) bool { return a.Plans[0].Approval != nil })
	assert.Equal(t, tokenName("alice-token"), done.Plans[0].Approval.By)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var by []any
		for _, e := range logs.All() {
			if v, ok := e.ContextMap()["approved_by"]; ok {
				by = append(by, v)
			}
		}
		if len(by) > 0 {
			assert.Equal(t, tokenName("alice-token"), by[0], "the remediator's audit names the token's holder")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit record with approved_by; last records: %v", logs.All())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
