package acceleratorinsightsexporter

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
	"github.com/otelcol-accel/otelcol-accel/internal/kubetest"
	"github.com/otelcol-accel/otelcol-accel/internal/senderauth"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// startRemediation runs the real accelerator_remediation exporter in
// approve mode against a real kube-apiserver (internal/kubetest), ticking
// fast: the plan, its approval and the steps it then runs are the engine's
// own. It returns the exporter's id, its log input and the admin's client.
func startRemediation(t *testing.T, name string) (component.ID, func(plog.Logs), kubernetes.Interface) {
	t.Helper()
	if _, _, err := kubetest.Binaries(); err != nil {
		if kubetest.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ctx := context.Background()
	srv, err := kubetest.Start(ctx, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	kubeconfig, err := srv.Kubeconfig("")
	require.NoError(t, err)

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
	le, err := f.CreateLogs(ctx, set, cfg)
	require.NoError(t, err)
	require.NoError(t, le.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, le.Shutdown(context.Background())) })
	// The events arrive as from behind accelerator_sender (access_test.go
	// runs the real check); the remediator acts only on checked data.
	checked := senderauth.WithChecked(context.Background())
	return set.ID, func(ld plog.Logs) { require.NoError(t, le.ConsumeLogs(checked, ld)) }, srv.Client("")
}

// xidEvent is a health event as the agents send it: XID 79 on one GPU.
func xidEvent(node, device string, at time.Time) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	r := rl.Resource().Attributes()
	r.PutStr(accelschema.AttrK8sNodeName, node)
	r.PutStr(accelschema.AttrHostName, node)
	r.PutStr(accelschema.AttrHWID, device)
	r.PutInt(accelschema.AttrDeviceIndex, 1)
	r.PutStr(accelschema.AttrHWModel, "NVIDIA H100 80GB HBM3")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(at))
	c := xid.Lookup(79)
	a := lr.Attributes()
	a.PutStr(accelschema.AttrEventName, accelschema.EventXID)
	a.PutInt(accelschema.AttrXID, 79)
	a.PutStr(accelschema.AttrHealthFailureMode, c.FailureMode)
	a.PutStr(accelschema.AttrHealthAction, c.Action)
	a.PutStr(accelschema.AttrHealthDescription, c.Description)
	a.PutStr(accelschema.AttrHWState, c.State)
	lr.Body().SetStr("XID 79")
	return ld
}

// waitPlans polls the console until cond holds for its answer (the engine
// makes and advances plans on its own ticks).
func waitPlans(t *testing.T, c *console, query string, cond func(plansAnswer) bool) plansAnswer {
	t.Helper()
	var out plansAnswer
	deadline := time.Now().Add(30 * time.Second)
	for {
		c.getJSON(t, "/api/v1/plans"+query, &out)
		if cond(out) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("plans never reached the expected state; last answer: %+v", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The console lists the remediation exporter's plans and approves one
// through the engine's own approval path: the plan then records who
// approved it and through what, and a second approval is refused.
func TestPlansListedAndApproved(t *testing.T) {
	id, send, kube := startRemediation(t, "plans")
	_, err := kube.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-p1"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	cfg := testConfig()
	cfg.Remediation = &id
	c := startConsole(t, cfg, nil, "plans")

	send(xidEvent("gpu-p1", "GPU-P1", time.Now()))
	got := waitPlans(t, c, "", func(a plansAnswer) bool { return a.AwaitingApproval == 1 })
	assert.Equal(t, id.String(), got.Remediation)
	assert.True(t, got.Running)
	assert.Empty(t, got.Problem)
	require.Len(t, got.Plans, 1)
	p := got.Plans[0]
	assert.True(t, p.AwaitingApproval)
	assert.Equal(t, "awaiting_approval", p.State)
	assert.Equal(t, "gpu-p1", p.Subject.Node)
	assert.Equal(t, "GPU-P1", p.Subject.DeviceID)
	assert.Equal(t, 79, p.Evidence.XID)
	assert.NotEmpty(t, p.Steps)
	for _, st := range p.Steps {
		assert.NotEmpty(t, st.Reason, "step %s has its reason", st.Kind)
	}
	assert.False(t, p.Expires.IsZero(), "a waiting plan says when it expires")

	// Filters: another node's plans are not this one.
	var none plansAnswer
	c.getJSON(t, "/api/v1/plans?node=gpu-other", &none)
	assert.Equal(t, 0, none.Total)
	c.getJSON(t, "/api/v1/plans?device=GPU-P1", &none)
	assert.Equal(t, 1, none.Total)
	resp, body := c.get(t, "/api/v1/plans?colour=red")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)

	path := "/api/v1/plans/" + p.ID + "/approve"
	resp, body = c.post(t, path, nil, "")
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "no CSRF token: %s", body)
	resp, body = c.post(t, path, map[string]string{csrfHeader: c.token, "Origin": "http://evil.example"}, "")
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "other origin: %s", body)
	resp, body = c.post(t, "/api/v1/plans/rp-nothere/approve", map[string]string{csrfHeader: c.token}, "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s", body)

	resp, body = c.post(t, path, map[string]string{csrfHeader: c.token, "Sec-Fetch-Site": "same-origin"}, `{"note": "checked the node"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var ok approveAnswer
	require.NoError(t, json.Unmarshal(body, &ok))
	assert.Equal(t, defaultApprover, ok.ApprovedBy)
	assert.Equal(t, "insights console", ok.Via)
	assert.Equal(t, p.ID, ok.Plan.ID)

	done := waitPlans(t, c, "", func(a plansAnswer) bool { return len(a.Plans) == 1 && a.Plans[0].Approval != nil })
	assert.Equal(t, defaultApprover, done.Plans[0].Approval.By)
	assert.Equal(t, "insights console", done.Plans[0].Approval.Via)
	assert.False(t, done.Plans[0].AwaitingApproval)
	assert.Equal(t, 0, done.AwaitingApproval)

	// The approval went through the engine: the plan runs its steps on
	// the cluster, the cordon among them.
	ran := waitPlans(t, c, "", func(a plansAnswer) bool {
		for _, st := range a.Plans[0].Steps {
			if st.Kind == "cordon_node" && st.State != "pending" && st.State != "started" {
				return true
			}
		}
		return false
	})
	for _, st := range ran.Plans[0].Steps {
		if st.Kind == "cordon_node" {
			require.Equal(t, "succeeded", st.State, "cordon: %s %s", st.Outcome, st.Error)
		}
	}
	node, err := kube.CoreV1().Nodes().Get(context.Background(), "gpu-p1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.True(t, node.Spec.Unschedulable, "the approved plan cordoned the node")

	resp, body = c.post(t, path, map[string]string{csrfHeader: c.token}, "")
	require.Equal(t, http.StatusConflict, resp.StatusCode, "approved twice: %s", body)
}

// Without a remediation key the answer says how to configure one, and an
// approval is refused.
func TestPlansWithoutRemediation(t *testing.T) {
	c := startConsole(t, testConfig(), nil, "noplans")
	var got plansAnswer
	c.getJSON(t, "/api/v1/plans", &got)
	assert.False(t, got.Running)
	assert.Empty(t, got.Remediation)
	assert.Contains(t, got.Problem, "remediation: accelerator_remediation")
	assert.Empty(t, got.Plans)
	assert.NotNil(t, got.Plans, "plans is [] for scripts, not null")
	resp, body := c.post(t, "/api/v1/plans/rp-1/approve", map[string]string{csrfHeader: c.token}, "")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(body), "no remediation exporter is configured")
}

// A remediation key naming an exporter that never starts (in no pipeline)
// stops the collector with a message saying what to add.
func TestPlansRemediationNotInPipeline(t *testing.T) {
	missing := component.MustNewIDWithName(remediationType, "nowhere")
	cfg := testConfig()
	cfg.Remediation = &missing
	host := &componenthealthtest.Host{}
	defer func(w time.Duration) { remediationStartWait = w }(remediationStartWait)
	remediationStartWait = 50 * time.Millisecond
	c := startConsole(t, cfg, host, "missing")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if ev := host.Last(); ev != nil && ev.Status() == componentstatus.StatusFatalError {
			require.ErrorContains(t, ev.Err(), `exporter "accelerator_remediation/nowhere" is not running in this collector`)
			require.ErrorContains(t, ev.Err(), "to a logs pipeline")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no fatal status reported; events: %v", host.Events())
		}
		time.Sleep(10 * time.Millisecond)
	}
	var got plansAnswer
	c.getJSON(t, "/api/v1/plans", &got)
	assert.False(t, got.Running)
	assert.Contains(t, got.Problem, "is not running in this collector")
}

func TestRemediationKeyValidated(t *testing.T) {
	cfg := testConfig()
	wrong := component.MustNewID("accelerator_insights")
	cfg.Remediation = &wrong
	err := cfg.Validate()
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "is not an accelerator_remediation exporter"), err.Error())
	right := component.MustNewIDWithName(remediationType, "gw")
	cfg.Remediation = &right
	require.NoError(t, cfg.Validate())
}

// authData is what an auth extension (oidc, basicauth) puts in the
// request's client.Info.
type authData map[string]any

func (a authData) GetAttribute(k string) any { return a[k] }
func (a authData) GetAttributeNames() []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	return out
}

// A write names the client the auth extension authenticated; with no name,
// the local console user on a loopback console, and a refusal beyond it.
func TestWriterIdentityFromAuth(t *testing.T) {
	req := func(a authData) *http.Request {
		r, err := http.NewRequest(http.MethodPost, "http://localhost/", nil)
		require.NoError(t, err)
		if a != nil {
			r = r.WithContext(client.NewContext(context.Background(), client.Info{Auth: a}))
		}
		return r
	}
	oidc := component.MustNewID("oidc")
	loopback := &writers{loopback: true}
	who, err := loopback.identity(req(nil))
	require.NoError(t, err)
	assert.Equal(t, defaultApprover, who)

	authed := &writers{auth: &oidc, endpoint: "0.0.0.0:8686"}
	for want, a := range map[string]authData{
		"alice@example.com": {"subject": "alice@example.com", "membership": []string{"sre"}},
		"bob":               {"username": "bob"},
	} {
		who, err := authed.identity(req(a))
		require.NoError(t, err)
		assert.Equal(t, want, who)
	}
	_, err = authed.identity(req(authData{"raw": "token"}))
	require.ErrorIs(t, err, errNoIdentity, "beyond loopback, an authenticator that names no one is refused")
	who, err = (&writers{auth: &oidc, loopback: true}).identity(req(authData{"raw": "token"}))
	require.NoError(t, err)
	assert.Equal(t, defaultApprover, who, "on loopback it is the local console user")

	open := &writers{endpoint: "0.0.0.0:8686"}
	_, err = open.identity(req(authData{"subject": "mallory"}))
	require.ErrorContains(t, err, "read-only", "no authenticator beyond loopback: read-only, whatever the context claims")
}
