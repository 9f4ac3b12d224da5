package acceleratorsenderprocessor_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter"
	"github.com/otelcol-accel/otelcol-accel/extension/k8stokenauthextension"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/kubetest"
	"github.com/otelcol-accel/otelcol-accel/internal/remediationplans"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorsenderprocessor"
)

const (
	namespace = "otelcol-accel"
	agentSA   = "otelcol-accel" // the shipped agents' account
	gatewaySA = "otelcol-accel-remediator"
)

// host is the collector's host as far as these components ask: the
// enabled extensions.
type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }

func unmarshal(t *testing.T, cfg component.Config, raw map[string]any) {
	t.Helper()
	if err := confmap.NewFromStringMap(raw).Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if v, ok := cfg.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

// gateway is the remediation path of a gateway as remediation.yaml wires
// it: the OTLP receiver authenticating with k8s_token_auth (TokenReview on
// a real kube-apiserver), accelerator_sender, accelerator_remediation.
type gateway struct {
	addr      string
	telemetry *componenttest.Telemetry
	exporter  component.ID
	audit     *observer.ObservedLogs // the remediator's log: its audit trail
	unchecked func(plog.Logs) error  // the exporter's logs side, reached without the check
}

func startGateway(t *testing.T, kubeconfig string) *gateway {
	t.Helper()
	ctx := context.Background()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })

	authFactory := k8stokenauthextension.NewFactory()
	authCfg := authFactory.CreateDefaultConfig()
	unmarshal(t, authCfg, map[string]any{"kubernetes": map[string]any{"auth_type": "kubeConfig", "kubeconfig": kubeconfig}})
	authSet := extensiontest.NewNopSettings(authFactory.Type())
	authSet.TelemetrySettings = tel.NewTelemetrySettings()
	auth, err := authFactory.Create(ctx, authSet, authCfg)
	if err != nil {
		t.Fatal(err)
	}
	h := host{component.NewID(authFactory.Type()): auth}

	expFactory := acceleratorremediationexporter.NewFactory()
	expCfg := expFactory.CreateDefaultConfig()
	unmarshal(t, expCfg, map[string]any{
		"mode": "recommend", "kubernetes": map[string]any{"enabled": false}, "leader_election": map[string]any{"enabled": false},
	})
	expSet := exportertest.NewNopSettings(expFactory.Type())
	expSet.TelemetrySettings = tel.NewTelemetrySettings()
	core, audit := observer.New(zap.InfoLevel)
	expSet.Logger = zap.New(core)
	exp, err := expFactory.CreateLogs(ctx, expSet, expCfg)
	if err != nil {
		t.Fatal(err)
	}

	procFactory := acceleratorsenderprocessor.NewFactory()
	procCfg := procFactory.CreateDefaultConfig()
	unmarshal(t, procCfg, map[string]any{"agent_service_accounts": []any{namespace + "/" + agentSA}})
	procSet := processortest.NewNopSettings(procFactory.Type())
	procSet.TelemetrySettings = tel.NewTelemetrySettings()
	proc, err := procFactory.CreateLogs(ctx, procSet, procCfg, exp)
	if err != nil {
		t.Fatal(err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	recvFactory := otlpreceiver.NewFactory()
	recvCfg := recvFactory.CreateDefaultConfig()
	unmarshal(t, recvCfg, map[string]any{"protocols": map[string]any{"grpc": map[string]any{
		"endpoint": addr, "auth": map[string]any{"authenticator": "k8s_token_auth"},
	}}})
	recvSet := receivertest.NewNopSettings(recvFactory.Type())
	recvSet.TelemetrySettings = tel.NewTelemetrySettings()
	recv, err := recvFactory.CreateLogs(ctx, recvSet, recvCfg, proc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []component.Component{auth, exp, proc, recv} {
		if err := c.Start(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, c := range []component.Component{recv, proc, exp, auth} {
			_ = c.Shutdown(context.Background())
		}
	})
	return &gateway{addr: addr, telemetry: tel, exporter: expSet.ID, audit: audit,
		unchecked: func(ld plog.Logs) error { return exp.ConsumeLogs(context.Background(), ld) }}
}

// sender is a collector sending to the gateway with k8s_token_auth's
// client side, its token file holding token (none when empty).
func (g *gateway) sender(t *testing.T, token string) plogotlp.GRPCClient {
	t.Helper()
	file := filepath.Join(t.TempDir(), "token")
	if token != "" {
		if err := os.WriteFile(file, []byte(token), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f := k8stokenauthextension.NewFactory()
	cfg := f.CreateDefaultConfig()
	unmarshal(t, cfg, map[string]any{"token_file": file})
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := ext.(extensionauth.GRPCClient).PerRPCCredentials()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(g.addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return plogotlp.NewGRPCClient(conn)
}

// xid79 is a node agent's XID 79 health event (GPU fallen off the bus:
// cordon and drain) for a device of node; reporter, when set, is what the
// sender claims to be.
func xid79(node, device, reporter string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	r := rl.Resource().Attributes()
	r.PutStr(accelschema.AttrK8sNodeName, node)
	r.PutStr(accelschema.AttrHostName, node)
	r.PutStr(accelschema.AttrHWID, device)
	r.PutInt(accelschema.AttrDeviceIndex, 0)
	r.PutStr(accelschema.AttrAllocationState, accelschema.AllocationUnallocated)
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	c := xid.Lookup(79)
	a := lr.Attributes()
	a.PutStr(accelschema.AttrEventName, accelschema.EventXID)
	a.PutInt(accelschema.AttrXID, 79)
	a.PutStr(accelschema.AttrHealthFailureMode, c.FailureMode)
	a.PutStr(accelschema.AttrHealthAction, c.Action)
	a.PutStr(accelschema.AttrHealthDescription, c.Description)
	if reporter != "" {
		a.PutStr(accelschema.AttrHealthReporter, reporter)
	}
	lr.Body().SetStr("XID 79: " + c.Mnemonic)
	return ld
}

func (g *gateway) plans(t *testing.T) []remediationplans.Plan {
	t.Helper()
	src, ok := remediationplans.Lookup(g.exporter)
	if !ok {
		t.Fatalf("the remediation exporter %s is not registered", g.exporter)
	}
	return src.Plans()
}

// counted sums a counter's points whose attribute key has value.
func (g *gateway) counted(t *testing.T, metric, key, value string) int64 {
	t.Helper()
	m, err := g.telemetry.GetMetric(metric)
	if err != nil {
		return 0 // nothing recorded yet
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is %T, want an int sum", metric, m.Data)
	}
	var n int64
	for _, dp := range sum.DataPoints {
		if v, ok := dp.Attributes.Value(attribute.Key(key)); ok && v.AsString() == value {
			n += dp.Value
		}
	}
	return n
}

// A forged XID 79 sent over OTLP to a gateway running the remediator makes
// no plan when it comes without a token, from a pod that is not an agent
// (an inference sidecar's account), or from another node's agent; each is
// refused or dropped and counted. The node's own agent's event makes the
// plan, whose evidence names that agent as the reporter whatever the
// event claimed. Data that reaches the remediator without the check is
// never acted on.
func TestForgedHealthEventsMakeNoPlan(t *testing.T) {
	if _, _, err := kubetest.Binaries(); err != nil {
		if kubetest.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	gw := kubetest.ServiceAccount(namespace, gatewaySA)
	s, err := kubetest.Start(ctx, dir, gw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	admin := s.Client("")
	if err := kubetest.AllowTokenReview(ctx, admin, namespace, gatewaySA); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := s.Kubeconfig(gw.Name)
	if err != nil {
		t.Fatal(err)
	}
	token := func(sa, pod, node string) string {
		p, err := kubetest.PodOnNode(ctx, admin, namespace, sa, pod, node)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := kubetest.BoundToken(ctx, admin, p, k8stokenauthextension.DefaultAudience)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	agentA := token(agentSA, "otelcol-accel-agent-aaaaa", "gpu-node-a")
	agentB := token(agentSA, "otelcol-accel-agent-bbbbb", "gpu-node-b")
	sidecarA := token("vllm", "vllm-llama-0", "gpu-node-a") // an inference pod on node a, with its own account

	g := startGateway(t, kubeconfig)
	const dropped = "otelcol_processor_accelerator_sender_dropped"
	const requests = "otelcol_extension_k8s_token_auth_requests"

	// (a) no token: refused at the receiver.
	_, err = g.sender(t, "").Export(ctx, plogotlp.NewExportRequestFromLogs(xid79("gpu-node-a", "GPU-aaaa", "")))
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("an XID without a token: %v, want Unauthenticated", err)
	}
	if n := g.counted(t, requests, "outcome", "missing_token"); n != 1 {
		t.Errorf("%s{outcome=missing_token} = %d, want 1", requests, n)
	}

	// (b) a pod that is not an agent, on the very node, claiming to be one.
	if _, err := g.sender(t, sidecarA).Export(ctx, plogotlp.NewExportRequestFromLogs(
		xid79("gpu-node-a", "GPU-aaaa", "system:serviceaccount:otelcol-accel:otelcol-accel/otelcol-accel-agent-aaaaa@gpu-node-a"))); err != nil {
		t.Fatalf("the sidecar's export (authenticated, its data dropped): %v", err)
	}
	if n := g.counted(t, dropped, "reason", "not_agent"); n != 1 {
		t.Errorf("%s{reason=not_agent} = %d, want 1", dropped, n)
	}

	// (c) another node's agent speaking for node a.
	if _, err := g.sender(t, agentB).Export(ctx, plogotlp.NewExportRequestFromLogs(xid79("gpu-node-a", "GPU-aaaa", ""))); err != nil {
		t.Fatalf("node b's agent's export: %v", err)
	}
	if n := g.counted(t, dropped, "reason", "other_node"); n != 1 {
		t.Errorf("%s{reason=other_node} = %d, want 1", dropped, n)
	}

	// Straight into the remediator, past the check: dropped, counted.
	if err := g.unchecked(xid79("gpu-node-c", "GPU-cccc", "")); err != nil {
		t.Fatal(err)
	}
	if n := g.counted(t, "otelcol_exporter_remediation_unchecked", "signal", "logs"); n != 1 {
		t.Errorf("exporter_remediation_unchecked{signal=logs} = %d, want 1", n)
	}

	// The export returned after the pipeline ran (receiver, processor and
	// exporter are synchronous): no plan was made.
	if plans := g.plans(t); len(plans) != 0 {
		t.Fatalf("forged events made plans: %+v", plans)
	}

	// (d) node a's own agent: the plan, reported by that agent.
	if _, err := g.sender(t, agentA).Export(ctx, plogotlp.NewExportRequestFromLogs(xid79("gpu-node-a", "GPU-aaaa", "somebody else"))); err != nil {
		t.Fatalf("node a's agent's export: %v", err)
	}
	plans := g.plans(t)
	if len(plans) != 1 || plans[0].Subject.Node != "gpu-node-a" || plans[0].Evidence.XID != 79 {
		t.Fatalf("plans after the agent's own XID 79: %+v, want one for gpu-node-a", plans)
	}
	want := "system:serviceaccount:otelcol-accel:otelcol-accel/otelcol-accel-agent-aaaaa@gpu-node-a"
	if got := plans[0].Evidence.Attributes[accelschema.AttrHealthReporter]; got != want {
		t.Errorf("the plan's reporter is %q, want %q", got, want)
	}
	// The audit record of the plan says who reported it.
	var audited bool
	for _, e := range g.audit.FilterMessage("accelerator_remediation: plan created").All() {
		if e.ContextMap()["reported_by"] == want {
			audited = true
		}
	}
	if !audited {
		t.Errorf("no plan-created audit record with reported_by=%s: %v", want, g.audit.All())
	}
}
