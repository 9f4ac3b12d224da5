//go:build e2e

package e2e

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// consoleRequest sends one request to the console at addr with the Host
// header of our choosing (curl -H "Host: …"), returning status and body.
func consoleRequest(t *testing.T, method, addr, path, host string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// Issue 36's attack on `make run`'s gateway (remediation in approve mode,
// the console on loopback): a DNS-rebinding page's two requests, the
// session read that handed out the CSRF token and the approval of the
// reboot plan, are both refused, and the plan still waits for an approval.
func TestDemoConsoleRefusesDNSRebinding(t *testing.T) {
	sim := e2etest.StartAccelsim(t, e2etest.SimOptions{Speed: 30})
	console := e2etest.FreeEndpoint(t)
	gw := e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: []string{e2etest.ConfigPath("gateway.yaml"), e2etest.ConfigPath("demo-gateway.yaml"),
			e2etest.ConfigPath("remediation.yaml"), e2etest.ConfigPath("demo-remediation.yaml")},
		Env: []string{"OTELCOL_ACCEL_DEMO_DIR=" + t.TempDir(), "OTELCOL_ACCEL_KUBECONFIG=" + sim.Endpoints.Kubeconfig,
			"OTELCOL_ACCEL_INSIGHTS_ENDPOINT=" + console},
	})
	for _, n := range sim.Endpoints.Nodes {
		if n.Name == "gpu-h200-a" {
			e2etest.StartAgent(t, sim.Endpoints, n, gw.Env[e2etest.EnvOTLPGRPC], "5s")
		}
	}
	plans := remWait(t, gw, 3*time.Minute, "the XID 79 plan awaiting approval", func() (map[string]string, bool) {
		p := remAwaiting(gw.Output())
		return p, p["gpu-h200-a"] != ""
	})
	plan := plans["gpu-h200-a"]
	_, port, _ := net.SplitHostPort(console)
	// A real token, as a legitimate page has it: the attacker would not,
	// and is refused even with it.
	code, body := consoleRequest(t, http.MethodGet, console, "/api/v1/session", "", nil)
	var sess struct {
		Token string `json:"csrf_token"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &sess) != nil || sess.Token == "" {
		t.Fatalf("the console's own session: %d %s", code, body)
	}
	for _, h := range []string{"evil.example:8686", "evil.example:" + port} {
		// tok=$(curl -s -H "Host: $H" http://127.0.0.1:8686/api/v1/session | jq -r .csrf_token)
		code, body = consoleRequest(t, http.MethodGet, console, "/api/v1/session", h, nil)
		if code != http.StatusMisdirectedRequest || strings.Contains(body, "csrf_token") {
			t.Errorf("GET /api/v1/session with Host %s: %d %s, want 421 and no token", h, code, body)
		}
		// curl -X POST -H "Host: $H" -H "Origin: http://$H" -H "X-Insights-CSRF: $tok" …/api/v1/plans/rp-…/approve
		code, body = consoleRequest(t, http.MethodPost, console, "/api/v1/plans/"+plan+"/approve", h,
			map[string]string{"Origin": "http://" + h, "X-Insights-CSRF": sess.Token})
		if code != http.StatusMisdirectedRequest {
			t.Errorf("POST approve with Host %s: %d %s, want 421", h, code, body)
		}
	}
	// The plan still waits, and nobody is recorded as its approver.
	var list struct {
		Plans []struct {
			ID               string `json:"id"`
			AwaitingApproval bool   `json:"awaiting_approval"`
		} `json:"plans"`
	}
	code, body = consoleRequest(t, http.MethodGet, console, "/api/v1/plans?node=gpu-h200-a", "", nil)
	if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil {
		t.Fatalf("GET /api/v1/plans: %d %s", code, body)
	}
	waiting := false
	for _, p := range list.Plans {
		if p.ID == plan {
			waiting = p.AwaitingApproval
		}
	}
	if !waiting {
		t.Errorf("plan %s no longer waits for an approval after the refused requests: %s", plan, body)
	}
	if strings.Contains(gw.Output(), `"approved_by"`) {
		t.Error("the gateway's audit records an approval")
	}
}
