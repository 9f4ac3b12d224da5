package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kubeapi"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

// accelsim approve sets the annotation the remediator reads, through the
// simulated API server, under the field manager it records as approver.
func TestApproveAnnotatesTheNode(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	store, err := kubeapi.NewStore(kubeapi.Objects(f))
	if err != nil {
		t.Fatal(err)
	}
	srv := kubeapi.NewServer(store)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubeapi.WriteKubeconfig(kc, hs.URL, f.Cluster); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"approve", "--kubeconfig", kc, "--node", "gpu-h200-a", "--plan", "rp-0123456789", "--field-manager", "alice"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "rp-0123456789") {
		t.Errorf("output %q names no plan", out.String())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	n, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().Get(context.Background(), "gpu-h200-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := approvePrefix + "/approve"
	if n.Annotations[key] != "rp-0123456789" {
		t.Fatalf("annotations %v", n.Annotations)
	}
	found := false
	for _, mf := range n.ManagedFields {
		if mf.Manager == "alice" && mf.FieldsV1 != nil && strings.Contains(mf.FieldsV1.GetRawString(), `"f:`+key+`"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no managedFields entry of alice for %s: %+v", key, n.ManagedFields)
	}

	errb.Reset()
	if code := run([]string{"approve", "--kubeconfig", kc, "--node", "no-such-node", "--plan", "rp-1"}, &out, &errb); code != exitError || !strings.Contains(errb.String(), "not found") {
		t.Errorf("unknown node: exit %d, %q", code, errb.String())
	}
	if code := run([]string{"approve", "--plan", "rp-1"}, &out, &errb); code != exitUsage {
		t.Errorf("missing flags: exit %d", code)
	}
}
