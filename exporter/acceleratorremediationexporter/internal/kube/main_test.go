package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	return kubetest.Apply(ctx, admin, namespace, objs...)
}

// cluster is the executors' shared state, acting as the remediator.
func cluster() *Cluster {
	return &Cluster{CS: server.Client(remediator), Prefix: prefix, Component: "otelcol-accel-remediator"}
}
