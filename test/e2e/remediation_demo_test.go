//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

const approveAnnotation = "accelerator.otelcol-accel.io/approve"

// `make run`'s remediation (demo-remediation.yaml, approve mode) on the
// simulated cluster: the demo's XID 48 (A100 GPU 6, one holder) and XID 79
// (H200, the node) each make a plan that waits; nothing in the cluster
// changes before its approval; approved with the annotation (kubectl's
// field manager) and with `accelsim approve`, the H200 node is cordoned,
// tainted and drained, and only the A100 GPU's holder is evicted, which
// also leaves the node's PodResources. As the demo ships it, one gateway
// keeps its plans in file_storage.
func TestDemoRemediationApproveMode(t *testing.T) {
	gw, cs := runDemoRemediation(t)
	if cms := remPlanConfigMaps(t, cs); len(cms) > 0 {
		t.Errorf("without leader election plans are not kept in the cluster, found ConfigMaps %v", cms)
	}
	files, _ := filepath.Glob(filepath.Join(gw.Env["OTELCOL_ACCEL_STORAGE_DIR"], "*remediation*"))
	if len(files) == 0 {
		t.Errorf("no plan storage of accelerator_remediation in the gateway's file_storage directory %s", gw.Env["OTELCOL_ACCEL_STORAGE_DIR"])
	}
}

// The same with leader election, as the shipped remediation.yaml runs: the
// gateway takes the Lease in the simulated cluster and keeps its plans in
// ConfigMaps beside it.
func TestDemoRemediationLeaderElected(t *testing.T) {
	_, cs := runDemoRemediation(t, "yaml:exporters::accelerator_remediation::leader_election::enabled: true")
	lease, err := cs.CoordinationV1().Leases("kube-system").Get(context.Background(), "otelcol-accel-remediator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("the Lease has no holder: %+v", lease.Spec)
	}
	if cms := remPlanConfigMaps(t, cs); len(cms) < 2 {
		t.Errorf("plans in the cluster: %v, want the two plans' ConfigMaps", cms)
	}
}

func remPlanConfigMaps(t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	l, err := cs.CoreV1().ConfigMaps("kube-system").List(context.Background(), metav1.ListOptions{LabelSelector: "accelerator.otelcol-accel.io/remediation-plans"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, cm := range l.Items {
		out = append(out, cm.Name)
	}
	return out
}

func runDemoRemediation(t *testing.T, extraConfigs ...string) (*e2etest.Collector, kubernetes.Interface) {
	t.Helper()
	// 30× speed: XID 48 at 40 s, XID 79 at 60 s.
	sim := e2etest.StartAccelsim(t, e2etest.SimOptions{Speed: 30})
	gw := e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: append([]string{e2etest.ConfigPath("gateway.yaml"), e2etest.ConfigPath("demo-gateway.yaml"),
			e2etest.ConfigPath("remediation.yaml"), e2etest.ConfigPath("demo-remediation.yaml")}, extraConfigs...),
		Env: []string{"OTELCOL_ACCEL_DEMO_DIR=" + t.TempDir(), "OTELCOL_ACCEL_KUBECONFIG=" + sim.Endpoints.Kubeconfig,
			"OTELCOL_ACCEL_INSIGHTS_ENDPOINT=" + e2etest.FreeEndpoint(t)},
	})
	nodes := map[string]endpoints.Node{}
	for _, n := range sim.Endpoints.Nodes {
		if n.Name == "gpu-a100-a" || n.Name == "gpu-h200-a" {
			nodes[n.Name] = n
			e2etest.StartAgent(t, sim.Endpoints, n, gw.Env[e2etest.EnvOTLPGRPC], "5s")
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", sim.Endpoints.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	holder := remHolder(t, nodes["gpu-a100-a"], 6)
	h200Pods := remPodsOn(t, cs, "gpu-h200-a")
	a100Pods := remPodsOn(t, cs, "gpu-a100-a")
	if len(h200Pods) == 0 || len(a100Pods) < 2 {
		t.Fatalf("the demo fleet changed: %d pods on gpu-h200-a, %d on gpu-a100-a", len(h200Pods), len(a100Pods))
	}

	plans := remWait(t, gw, 3*time.Minute, "both plans awaiting approval", func() (map[string]string, bool) {
		p := remAwaiting(gw.Output())
		return p, p["gpu-a100-a"] != "" && p["gpu-h200-a"] != ""
	})

	// Nothing ran before the approval.
	for _, name := range []string{"gpu-a100-a", "gpu-h200-a"} {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n.Spec.Unschedulable || len(n.Spec.Taints) > 0 || remCondition(n) != nil {
			t.Fatalf("%s changed before its plan was approved: unschedulable %v, taints %v, condition %v", name, n.Spec.Unschedulable, n.Spec.Taints, remCondition(n))
		}
	}
	still := map[string]bool{}
	for _, p := range remPodsOn(t, cs, "gpu-h200-a") {
		still[p] = true
	}
	for _, p := range h200Pods {
		if !still[p] {
			t.Fatalf("%s on gpu-h200-a evicted before the approval", p)
		}
	}
	if _, err := cs.CoreV1().Pods(holder.Namespace).Get(ctx, holder.Pod, metav1.GetOptions{}); err != nil {
		t.Fatalf("the holder %s/%s is gone before the approval: %v", holder.Namespace, holder.Pod, err)
	}
	if evs, _ := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Node"}); len(evs.Items) > 0 {
		t.Fatalf("events recorded before the approval: %v", evs.Items)
	}

	// kubectl annotate node gpu-h200-a accelerator.otelcol-accel.io/approve=<plan>
	patch := []byte(`{"metadata":{"annotations":{"` + approveAnnotation + `":"` + plans["gpu-h200-a"] + `"}}}`)
	if _, err := cs.CoreV1().Nodes().Patch(ctx, "gpu-h200-a", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-annotate"}); err != nil {
		t.Fatal(err)
	}
	// accelsim approve for the other.
	out, err := exec.Command(e2etest.AccelsimBinary(t), "approve", "--state-dir", sim.StateDir, "--node", "gpu-a100-a", "--plan", plans["gpu-a100-a"]).CombinedOutput()
	if err != nil {
		t.Fatalf("accelsim approve: %v\n%s", err, out)
	}

	remWait(t, gw, 2*time.Minute, "gpu-h200-a cordoned, tainted, its condition set and drained; only the A100 holder evicted", func() (struct{}, bool) {
		n, err := cs.CoreV1().Nodes().Get(ctx, "gpu-h200-a", metav1.GetOptions{})
		if err != nil || !n.Spec.Unschedulable || len(n.Spec.Taints) == 0 || remCondition(n) == nil || remCondition(n).Status != corev1.ConditionFalse {
			return struct{}{}, false
		}
		// Every pod the node had is gone (the simulator's story may place
		// pods of its own later; no scheduler keeps them off).
		now := map[string]bool{}
		for _, p := range remPodsOn(t, cs, "gpu-h200-a") {
			now[p] = true
		}
		for _, p := range h200Pods {
			if now[p] {
				return struct{}{}, false
			}
		}
		_, err = cs.CoreV1().Pods(holder.Namespace).Get(ctx, holder.Pod, metav1.GetOptions{})
		return struct{}{}, apierrors.IsNotFound(err)
	})
	left := map[string]bool{}
	for _, p := range remPodsOn(t, cs, "gpu-a100-a") {
		left[p] = true
	}
	for _, p := range a100Pods {
		if p != holder.Namespace+"/"+holder.Pod && !left[p] {
			t.Errorf("gpu-a100-a: %s was evicted too; only the holder of GPU 6 should go", p)
		}
	}
	a100, err := cs.CoreV1().Nodes().Get(ctx, "gpu-a100-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a100.Spec.Unschedulable {
		t.Error("a device fault (XID 48) cordoned the whole node")
	}
	if c := remCondition(a100); c == nil || c.Reason != "Memory" {
		t.Errorf("gpu-a100-a condition %+v, want AcceleratorHealthy=False reason Memory", c)
	}
	if held := remPodResources(t, nodes["gpu-a100-a"]); held[holder.Namespace+"/"+holder.Pod] {
		t.Errorf("the evicted holder still holds its devices in PodResources")
	}
	log := gw.Output()
	for _, who := range []string{`"approved_by": "kubectl-annotate"`, `"approved_by": "accelsim-approve"`} {
		if !strings.Contains(log, who) {
			t.Errorf("the gateway's audit records no step %s", who)
		}
	}
	return gw, cs
}

// awaiting returns node → plan id of the plans the gateway logged as
// awaiting approval.
func remAwaiting(log string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "accelerator_remediation: plan awaiting_approval") {
			continue
		}
		i := strings.Index(line, "{")
		var f map[string]any
		if i < 0 || json.Unmarshal([]byte(line[i:]), &f) != nil {
			continue
		}
		node, _ := f["node"].(string)
		plan, _ := f["plan"].(string)
		if node != "" && plan != "" {
			out[node] = plan
		}
	}
	return out
}

// remWait waits for check (e2etest.AwaitResult) and returns its value; a
// failure shows the last value and the remediation exporter's log.
func remWait[T any](t *testing.T, gw *e2etest.Collector, limit time.Duration, what string, check func() (T, bool)) T {
	t.Helper()
	var v T
	if _, ok := e2etest.AwaitResult(limit, func() (string, bool) {
		var ok bool
		v, ok = check()
		return fmt.Sprintf("%+v", v), ok
	}); !ok {
		t.Fatalf("after %s: not %s; last saw %+v\n---- gateway log (remediation) ----\n%s", limit, what, v, remGrep(gw.Output(), "accelerator_remediation"))
	}
	return v
}

func remGrep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func remCondition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == "AcceleratorHealthy" {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func remPodsOn(t *testing.T, cs kubernetes.Interface, node string) []string {
	t.Helper()
	l, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

func remHolder(t *testing.T, n endpoints.Node, index int) endpoints.Holder {
	t.Helper()
	for _, d := range n.Devices {
		if d.Index == index && len(d.Holders) == 1 {
			return d.Holders[0]
		}
	}
	t.Fatalf("%s GPU %d has not exactly one holder", n.Name, index)
	return endpoints.Holder{}
}

func remPodResources(t *testing.T, n endpoints.Node) map[string]bool {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+n.PodResourcesSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp, err := podresourcesv1.NewPodResourcesListerClient(conn).List(context.Background(), &podresourcesv1.ListPodResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range resp.GetPodResources() {
		out[p.GetNamespace()+"/"+p.GetName()] = true
	}
	return out
}
