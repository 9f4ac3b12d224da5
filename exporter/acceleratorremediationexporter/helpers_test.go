package acceleratorremediationexporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/kube"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/kubetest"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

const (
	testNamespace = "otelcol-accel"
	remediator    = "system:serviceaccount:otelcol-accel:otelcol-accel-remediator"
	nodeAgent     = "system:serviceaccount:otelcol-accel:otelcol-accel"
)

// server is one real kube-apiserver (and etcd) for the package; nil when
// the binaries are missing outside CI (tests that need it skip then).
var server *kubetest.Server

// runWithKubeAPIServer is the package's TestMain (set in metadata.yaml):
// it starts the API server, runs the tests, stops it.
func runWithKubeAPIServer(m *testing.M) int {
	return func() int {
		if _, _, err := kubetest.Binaries(); err != nil {
			if kubetest.Required() {
				fmt.Fprintln(os.Stderr, "FAIL:", err)
				return 1
			}
			fmt.Fprintln(os.Stderr, "the remediation tests that need a kube-apiserver will skip:", err)
			return m.Run()
		}
		dir, err := os.MkdirTemp("", "kubetest-")
		if err != nil {
			panic(err)
		}
		ctx := context.Background()
		server, err = kubetest.Start(ctx, dir, kubetest.ServiceAccount(testNamespace, "otelcol-accel-remediator"),
			kubetest.ServiceAccount(testNamespace, "otelcol-accel")) // the node agents' read-only account
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: kube-apiserver:", err)
			return 1
		}
		defer server.Stop()
		admin := server.Client("")
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNamespace}}, metav1.CreateOptions{}); err != nil {
			panic(err)
		}
		_, file, _, _ := runtime.Caller(0)
		k8s := filepath.Join(filepath.Dir(file), "..", "..", "distributions", "otelcol-accel", "kubernetes")
		for _, f := range []string{filepath.Join(k8s, "overlays", "remediation", "remediator-rbac.yaml"), filepath.Join(k8s, "base", "rbac.yaml")} {
			objs, derr := kubetest.Decode(f)
			if derr == nil {
				derr = kubetest.Apply(ctx, admin, testNamespace, objs...)
			}
			if derr != nil {
				err = fmt.Errorf("%s: %w", f, derr)
				break
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: shipped RBAC:", err)
			return 1
		}
		if err := installNodeClaimCRD(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: NodeClaim CRD:", err)
			return 1
		}
		code := m.Run()
		if code == 0 {
			_ = os.RemoveAll(dir)
		}
		return code
	}()
}

func needServer(t *testing.T) {
	t.Helper()
	if server == nil {
		t.Skip("needs the kube-apiserver (make tools)")
	}
}

// clock is the tests' time: plans, approvals, backoff and guard rails all
// read it, so no test waits.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type harness struct {
	t     *testing.T
	e     *remediationExporter
	clock *clock
	logs  *observer.ObservedLogs
	tel   *componenttest.Telemetry
}

func testConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.LeaderElection.Enabled = false
	cfg.GuardRails.MaxNodes = 10
	cfg.GuardRails.MaxPercentPerInstanceType = 100
	cfg.GuardRails.ActionsPerHour = 1000
	cfg.Retry.InitialInterval = time.Second
	cfg.Retry.MaxInterval = 4 * time.Second
	cfg.Retry.MaxAttempts = 3
	return cfg
}

// start runs the exporter against the test API server as the remediator,
// with the test's clock and hand-driven ticks.
func start(t *testing.T, cfg *Config, clk *clock, host component.Host) *harness {
	t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	tel := componenttest.NewTelemetry()
	set := exportertest.NewNopSettings(metadata.Type)
	set.ID = component.NewID(metadata.Type) // the same storage file across restarts
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	e, err := newExporter(cfg, set)
	require.NoError(t, err)
	e.now, e.manual = clk.now, true
	if server != nil {
		e.clientset = server.Client(remediator)
		e.dynamic, err = dynamic.NewForConfig(server.Config(remediator))
		require.NoError(t, err)
	}
	if host == nil {
		host = componenttest.NewNopHost()
	}
	require.NoError(t, e.Start(context.Background(), host))
	h := &harness{t: t, e: e, clock: clk, logs: logs, tel: tel}
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return h
}

func (h *harness) tick() { h.t.Helper(); h.e.tick(context.Background()) }

func (h *harness) plans() []*plan.Plan { return h.e.store.All() }

func (h *harness) only() *plan.Plan {
	h.t.Helper()
	ps := h.plans()
	require.Len(h.t, ps, 1)
	return ps[0]
}

// event is a health event as the pipeline delivers it: the device's
// resource with its holder (the attributes processor's work) and the
// record internal/xid classified.
type event struct {
	node, device, pod, namespace, instanceType string
	xid                                        int
	draDevice                                  string
}

func (ev event) logs(at time.Time) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	r := rl.Resource().Attributes()
	r.PutStr(accelschema.AttrK8sNodeName, ev.node)
	r.PutStr(accelschema.AttrHostName, ev.node)
	r.PutStr(accelschema.AttrHWID, ev.device)
	r.PutInt(accelschema.AttrDeviceIndex, 3)
	r.PutStr(accelschema.AttrHWModel, "NVIDIA H100 80GB HBM3")
	r.PutStr(accelschema.AttrHWDriverVersion, "570.124.06")
	if ev.instanceType != "" {
		r.PutStr(accelschema.AttrHostType, ev.instanceType)
	}
	if ev.pod != "" {
		r.PutStr(accelschema.AttrK8sPodName, ev.pod)
		r.PutStr(accelschema.AttrK8sNamespaceName, ev.namespace)
		r.PutStr(accelschema.AttrAllocationState, accelschema.AllocationAllocated)
	}
	if ev.draDevice != "" {
		r.PutStr(accelschema.AttrDRADriver, "gpu.nvidia.com")
		r.PutStr(accelschema.AttrDRAPool, ev.node)
		r.PutStr(accelschema.AttrDRADevice, ev.draDevice)
	}
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(at))
	c := xid.Lookup(ev.xid)
	a := lr.Attributes()
	a.PutStr(accelschema.AttrEventName, accelschema.EventXID)
	a.PutInt(accelschema.AttrXID, int64(ev.xid))
	a.PutStr(accelschema.AttrHealthFailureMode, c.FailureMode)
	a.PutStr(accelschema.AttrHealthAction, c.Action)
	a.PutStr(accelschema.AttrHealthDescription, c.Description)
	a.PutStr(accelschema.AttrHWState, c.State)
	lr.Body().SetStr(fmt.Sprintf("XID %d: %s", ev.xid, c.Mnemonic))
	return ld
}

func (h *harness) send(ev event) {
	h.t.Helper()
	h.e.intake(ev.logs(h.clock.now()))
}

func admin() *kubetestClient { return &kubetestClient{} }

// kubetestClient groups the admin's reads and writes the tests make.
type kubetestClient struct{}

func (kubetestClient) node(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n, err := server.Client("").CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return n
}

func (kubetestClient) mkNode(t *testing.T, name, instanceType string) {
	t.Helper()
	_, err := server.Client("").CoreV1().Nodes().Create(context.Background(), &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"node.kubernetes.io/instance-type": instanceType}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

func (kubetestClient) mkNamespace(t *testing.T, name string) {
	t.Helper()
	_, err := server.Client("").CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// mkPod creates a Running, Ready pod bound to node (the Eviction API
// checks PodDisruptionBudgets only for such pods).
func (kubetestClient) mkPod(t *testing.T, ns, name, node string, labels map[string]string) {
	t.Helper()
	p, err := server.Client("").CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name + "-rs", UID: "00000000-0000-0000-0000-000000000002", Controller: new(true),
		}}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	_, err = server.Client("").CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func (kubetestClient) evicted(t *testing.T, ns, name string) bool {
	t.Helper()
	p, err := server.Client("").CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return true
	}
	return p.DeletionTimestamp != nil
}

// approve is `kubectl annotate node <node> <prefix>/approve=<plan id>`.
func (kubetestClient) approve(t *testing.T, node, id string) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + DefaultPrefix + `/approve":"` + id + `"}}}`)
	_, err := server.Client("").CoreV1().Nodes().Patch(context.Background(), node, "application/merge-patch+json", patch, metav1.PatchOptions{FieldManager: "kubectl-annotate"})
	require.NoError(t, err)
}

func approveMode(cfg *Config) *Config { cfg.Mode = engine.Approve; return cfg }

// installNodeClaimCRD serves Karpenter's NodeClaim kind (karpenter.sh/v1),
// schema left open: the remediator reads only status.nodeName.
func installNodeClaimCRD(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(server.Config(""))
	if err != nil {
		return err
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "nodeclaims.karpenter.sh"},
		"spec": map[string]any{
			"group": "karpenter.sh", "scope": "Cluster",
			"names": map[string]any{"plural": "nodeclaims", "singular": "nodeclaim", "kind": "NodeClaim", "listKind": "NodeClaimList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := dyn.Resource(kube.NodeClaims).List(ctx, metav1.ListOptions{})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("NodeClaim CRD not served: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
