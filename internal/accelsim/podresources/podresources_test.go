package podresources

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

// client serves node n on a unix socket and dials it with the generated
// client, as the collector and dcgm-exporter do.
func client(t *testing.T, f *fleet.Fleet, node string) v1.PodResourcesListerClient {
	t.Helper()
	n, ok := f.Node(node)
	if !ok {
		t.Fatalf("no node %s", node)
	}
	dir, err := os.MkdirTemp("", "prs")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "kubelet.sock")
	l, err := Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	gs := NewGRPCServer(New(n))
	go func() { _ = gs.Serve(l) }()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); gs.Stop(); os.RemoveAll(dir) })
	return v1.NewPodResourcesListerClient(conn)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// devices flattens a List response: "ns/pod/container resource" → ids.
func devices(resp *v1.ListPodResourcesResponse) map[string][]string {
	out := map[string][]string{}
	for _, p := range resp.GetPodResources() {
		for _, c := range p.GetContainers() {
			for _, d := range c.GetDevices() {
				k := p.GetNamespace() + "/" + p.GetName() + "/" + c.GetName() + " " + d.GetResourceName()
				out[k] = append(out[k], d.GetDeviceIds()...)
			}
		}
	}
	return out
}

func TestListDeviceForms(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	h100, _ := f.Node("gpu-h100-a")
	resp, err := client(t, f, "gpu-h100-a").List(ctx(t), &v1.ListPodResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetPodResources()) != len(h100.Pods) {
		t.Fatalf("%d pods, want %d", len(resp.GetPodResources()), len(h100.Pods))
	}
	d := devices(resp)
	if ids := d["research/llama-pretrain-0/trainer nvidia.com/gpu"]; len(ids) != 4 || ids[0] != h100.GPUs[2].UUID {
		t.Errorf("whole GPUs: %v", ids)
	}
	if ids := d["search/vllm-llama-6b9f7d4c8-k2x7p/vllm nvidia.com/mig-3g.40gb"]; len(ids) != 1 || ids[0] != h100.GPUs[0].MIG[0].UUID {
		t.Errorf("MIG device: %v", ids)
	}
	l4, _ := f.Node("gpu-l4-a")
	d = devices(mustList(t, client(t, f, "gpu-l4-a")))
	if ids := d["chat/sglang-small-0/sglang nvidia.com/gpu"]; len(ids) != 2 || ids[1] != l4.GPUs[1].UUID+"::1" {
		t.Errorf("time-slicing replicas: %v", ids)
	}
	d = devices(mustList(t, client(t, f, "neuron-inf2-a")))
	if ids := d["search/llama-inf2-6d5c4b3a2-m9n8b/vllm aws.amazon.com/neuroncore"]; strings.Join(ids, ",") != "0,1,2,3" {
		t.Errorf("Neuron cores: %v", ids)
	}
	if ids := d["search/rerank-batch-0/worker aws.amazon.com/neuron"]; strings.Join(ids, ",") != "4,5" {
		t.Errorf("Neuron devices: %v", ids)
	}
}

func mustList(t *testing.T, c v1.PodResourcesListerClient) *v1.ListPodResourcesResponse {
	resp, err := c.List(ctx(t), &v1.ListPodResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestDynamicResources(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	c := client(t, f, "gpu-h200-a")
	got, err := c.Get(ctx(t), &v1.GetPodResourcesRequest{PodName: "vllm-canary-0", PodNamespace: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	dr := got.GetPodResources().GetContainers()[0].GetDynamicResources()
	if len(dr) != 1 || dr[0].GetClaimName() != "shared-h200" || dr[0].GetClaimNamespace() != "chat" {
		t.Fatalf("dynamic resources: %v", dr)
	}
	cr := dr[0].GetClaimResources()[0]
	if cr.GetDriverName() != "gpu.nvidia.com" || cr.GetPoolName() != "gpu-h200-a" || cr.GetDeviceName() != "gpu-4" ||
		len(cr.GetCdiDevices()) != 1 || !strings.HasPrefix(cr.GetCdiDevices()[0].GetName(), "k8s.gpu.nvidia.com/claim=") {
		t.Errorf("claim resource: %v", cr)
	}
	got, err = c.Get(ctx(t), &v1.GetPodResourcesRequest{PodName: "notebook-carol", PodNamespace: "data-science"})
	if err != nil {
		t.Fatal(err)
	}
	if dev := got.GetPodResources().GetContainers()[0].GetDynamicResources()[0].GetClaimResources()[0].GetDeviceName(); dev != "gpu-0-mig-3g71gb-9-0" {
		t.Errorf("MIG claim device: %s", dev)
	}
	// DRA-managed GPUs are not device-plugin devices.
	alloc, err := c.GetAllocatableResources(ctx(t), &v1.AllocatableResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(alloc.GetDevices()) != 0 {
		t.Errorf("allocatable on a DRA node: %v", alloc.GetDevices())
	}
}

func TestGetUnknownPod(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	_, err := client(t, f, "gpu-a100-a").Get(ctx(t), &v1.GetPodResourcesRequest{PodName: "ghost", PodNamespace: "default"})
	if err == nil || !strings.Contains(err.Error(), "pod ghost in namespace default not found") {
		t.Errorf("got %v", err)
	}
}

func TestAllocatable(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	count := func(node string) map[string]int {
		alloc, err := client(t, f, node).GetAllocatableResources(ctx(t), &v1.AllocatableResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, d := range alloc.GetDevices() {
			out[d.GetResourceName()] += len(d.GetDeviceIds())
			if len(d.GetTopology().GetNodes()) != 1 {
				t.Errorf("%s: topology %v", node, d.GetTopology())
			}
		}
		return out
	}
	if got := count("gpu-h100-a"); got["nvidia.com/gpu"] != 6 || got["nvidia.com/mig-1g.10gb"] != 3 || got["nvidia.com/mig-3g.40gb"] != 1 {
		t.Errorf("H100 allocatable: %v", got)
	}
	if got := count("gpu-l4-a"); got["nvidia.com/gpu"] != 16 {
		t.Errorf("L4 allocatable (4 GPUs × 4 replicas): %v", got)
	}
	if got := count("neuron-trn1-a"); got["aws.amazon.com/neuron"] != 16 || got["aws.amazon.com/neuroncore"] != 32 {
		t.Errorf("trn1 allocatable (16 devices × 2 cores): %v", got)
	}
}

func TestSocketPathTooLong(t *testing.T) {
	_, err := Listen("/tmp/" + strings.Repeat("d", 120) + "/kubelet.sock")
	if err == nil || !strings.Contains(err.Error(), "use a shorter state directory") {
		t.Errorf("got %v", err)
	}
}
