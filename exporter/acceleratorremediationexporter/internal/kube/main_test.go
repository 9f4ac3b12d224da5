package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/otelcol-accel/otelcol-accel/internal/kubetest"
)

const (
	namespace  = "otelcol-accel"
	remediator = "system:serviceaccount:otelcol-accel:otelcol-accel-remediator"
	prefix     = "accelerator.otelcol-accel.io"
)

// server is one real kube-apiserver (and etcd) for the package's tests;
// each test works on its own nodes and namespaces.
var server *kubetest.Server

func TestMain(m *testing.M) {
	if _, _, err := kubetest.Binaries(); err != nil {
		if kubetest.Required() {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "SKIP: the Kubernetes executor tests need a real kube-apiserver:", err)
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	server, err = kubetest.Start(ctx, dir, kubetest.ServiceAccount(namespace, "otelcol-accel-remediator"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: kube-apiserver:", err)
		os.Exit(1)
	}
	code := func() int {
		defer server.Stop()
		if err := applyShipped(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: shipped RBAC:", err)
			return 1
		}
		return m.Run()
	}()
	if code == 0 {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

// shippedRBAC is the remediator's ServiceAccount and roles as shipped.
func shippedRBAC() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "distributions", "otelcol-accel", "kubernetes", "overlays", "remediation", "remediator-rbac.yaml")
}

func applyShipped(ctx context.Context) error {
	admin := server.Client("")
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	objs, err := kubetest.Decode(shippedRBAC())
	if err != nil {
		return err
	}
	if err := kubetest.Apply(ctx, admin, namespace, objs...); err != nil {
		return err
	}
	return installNodeClaimCRD(ctx)
}

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
		if _, err := dyn.Resource(NodeClaims).List(ctx, metav1.ListOptions{}); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("NodeClaim CRD not served: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// mkNodeClaim creates the NodeClaim Karpenter would have for node.
func mkNodeClaim(t *testing.T, name, node string) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(server.Config(""))
	if err != nil {
		t.Fatal(err)
	}
	_, err = dyn.Resource(NodeClaims).Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": map[string]any{"name": name},
		"status": map[string]any{"nodeName": node},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// cluster is the executors' shared state, acting as the remediator.
func cluster() *Cluster {
	return &Cluster{CS: server.Client(remediator), Prefix: prefix, Component: "otelcol-accel-remediator"}
}

// karpenter is the NodeClaim executor, acting as the remediator.
func karpenter() ReplaceKarpenterNode {
	dyn, err := dynamic.NewForConfig(server.Config(remediator))
	if err != nil {
		panic(err)
	}
	return ReplaceKarpenterNode{Cluster: cluster(), Dynamic: dyn}
}
