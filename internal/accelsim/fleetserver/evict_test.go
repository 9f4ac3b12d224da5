package fleetserver

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
)

// A pod evicted through the simulated API server (client-go, the
// kubeconfig the simulator wrote) no longer holds its devices in its
// node's PodResources; the other pods still do.
func TestEvictedPodLeavesPodResources(t *testing.T) {
	r := start(t, 0, &sim.FixedClock{T: time.Unix(1_800_000_000, 0)})
	cfg, err := clientcmd.BuildConfigFromFlags("", r.File.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var sock string
	for _, n := range r.File.Nodes {
		if n.Name == "gpu-a100-a" {
			sock = n.PodResourcesSocket
		}
	}
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pr := podresourcesv1.NewPodResourcesListerClient(conn)
	ctx := context.Background()
	listed := func() map[string]bool {
		resp, err := pr.List(ctx, &podresourcesv1.ListPodResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, p := range resp.GetPodResources() {
			out[p.GetNamespace()+"/"+p.GetName()] = true
		}
		return out
	}
	before := listed()
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=gpu-a100-a"})
	if err != nil || len(pods.Items) < 2 {
		t.Fatalf("pods of gpu-a100-a: %v, %d", err, len(pods.Items))
	}
	victim := pods.Items[0]
	key := victim.Namespace + "/" + victim.Name
	if !before[key] {
		t.Fatalf("%s not in PodResources before: %v", key, before)
	}
	if err := cs.PolicyV1().Evictions(victim.Namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: victim.Name, Namespace: victim.Namespace}}); err != nil {
		t.Fatal(err)
	}
	after := listed()
	if after[key] {
		t.Errorf("%s still holds its devices after its eviction", key)
	}
	if len(after) != len(before)-1 {
		t.Errorf("PodResources lists %d pods after, want %d (only the evicted one gone)", len(after), len(before)-1)
	}
	if _, err := pr.Get(ctx, &podresourcesv1.GetPodResourcesRequest{PodNamespace: victim.Namespace, PodName: victim.Name}); err == nil {
		t.Errorf("Get %s answered after its eviction", key)
	}
}
