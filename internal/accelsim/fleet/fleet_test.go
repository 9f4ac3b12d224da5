package fleet_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

var (
	gpuUUIDRE = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	migUUIDRE = regexp.MustCompile(`^MIG-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
)

// ids collects every identifier of a fleet in a stable order.
func ids(f *fleet.Fleet) []string {
	var out []string
	for _, n := range f.Nodes {
		out = append(out, n.InstanceID, n.InternalIP)
		for _, g := range n.GPUs {
			out = append(out, g.UUID)
			for _, m := range g.MIG {
				out = append(out, m.UUID)
			}
		}
	}
	for _, p := range f.Pods {
		out = append(out, p.UID, p.IP)
	}
	for _, c := range f.Claims {
		out = append(out, c.UID)
	}
	return out
}

func TestDeterministicForASeed(t *testing.T) {
	a, b := ids(simtest.DemoFleet(t, 7)), ids(simtest.DemoFleet(t, 7))
	c := ids(simtest.DemoFleet(t, 8))
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Fatal("the same seed gave different identifiers")
	}
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same > len(a)/10 {
		t.Errorf("seeds 7 and 8 share %d of %d identifiers", same, len(a))
	}
	seen := map[string]bool{}
	for _, id := range a {
		if strings.HasPrefix(id, "GPU-") || strings.HasPrefix(id, "MIG-") {
			if seen[id] {
				t.Errorf("duplicate id %s", id)
			}
			seen[id] = true
		}
	}
}

func TestDeviceIDsAsTheKubeletReportsThem(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	want := map[string]string{
		"llama-pretrain-0":           "nvidia.com/gpu",
		"vllm-llama-6b9f7d4c8-k2x7p": "nvidia.com/mig-3g.40gb",
		"sglang-small-0":             "nvidia.com/gpu",
		"llama-inf2-6d5c4b3a2-m9n8b": "aws.amazon.com/neuroncore",
		"rerank-batch-0":             "aws.amazon.com/neuron",
	}
	for _, p := range f.Pods {
		res, ok := want[p.Name]
		if !ok {
			continue
		}
		d := p.Containers[0].Devices[0]
		if d.Resource != res {
			t.Errorf("%s: resource %s, want %s", p.Name, d.Resource, res)
		}
		for _, id := range d.IDs {
			switch {
			case strings.HasPrefix(res, "nvidia.com/mig-"):
				if !migUUIDRE.MatchString(id) {
					t.Errorf("%s: MIG id %q", p.Name, id)
				}
			case p.Name == "sglang-small-0":
				gpu, replica, ok := strings.Cut(id, "::")
				if !ok || !gpuUUIDRE.MatchString(gpu) || (replica != "0" && replica != "1") {
					t.Errorf("%s: replica id %q", p.Name, id)
				}
			case res == "nvidia.com/gpu":
				if !gpuUUIDRE.MatchString(id) {
					t.Errorf("%s: GPU id %q", p.Name, id)
				}
			}
		}
	}
}

func TestOwnerChains(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	byName := map[string]*fleet.Pod{}
	for _, p := range f.Pods {
		byName[p.Name] = p
	}
	chain := func(name string) string {
		var parts []string
		for _, o := range byName[name].Owners {
			parts = append(parts, o.Kind+"/"+o.Name)
		}
		return strings.Join(parts, " > ")
	}
	for pod, want := range map[string]string{
		"vllm-llama-6b9f7d4c8-k2x7p": "ReplicaSet/vllm-llama-6b9f7d4c8 > Deployment/vllm-llama",
		"llama-pretrain-0":           "Job/llama-pretrain",
		"sglang-qwen-0":              "StatefulSet/sglang-qwen",
		"llm-serving-0":              "StatefulSet/llm-serving > LeaderWorkerSet/llm-serving",
		"notebook-bob":               "",
	} {
		if got := chain(pod); got != want {
			t.Errorf("%s: owners %q, want %q", pod, got, want)
		}
	}
	if got := chain("eval-harness-0"); !regexp.MustCompile(`^Job/eval-harness-\d+ > CronJob/eval-harness$`).MatchString(got) {
		t.Errorf("eval-harness-0: owners %q", got)
	}
	p := byName["vllm-llama-6b9f7d4c8-k2x7p"]
	if p.Labels["pod-template-hash"] != "6b9f7d4c8" || p.Labels[fleet.LabelTeam] != "search" ||
		p.Labels[fleet.LabelWorkload] != "vllm-llama" || p.Labels[fleet.LabelWorkloadType] != "inference" {
		t.Errorf("labels %v", p.Labels)
	}
}

func TestSharedHolders(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	h200, _ := f.Node("gpu-h200-a")
	if n := len(h200.GPUs[4].Holders); n != 2 {
		t.Errorf("the shared MPS claim's GPU has %d holders, want 2", n)
	}
	l4, _ := f.Node("gpu-l4-a")
	if n := len(l4.GPUs[0].Holders); n != 2 {
		t.Errorf("time-sliced L4 GPU 0 has %d holders, want 2", n)
	}
	if len(l4.GPUs[3].Holders) != 0 {
		t.Error("L4 GPU 3 should be unallocated")
	}
	mig := h200.GPUs[0].MIG[0]
	if mig.DRAName() != "gpu-0-mig-3g71gb-9-0" || mig.Share != 0.5 {
		t.Errorf("H200 MIG: %s share %v", mig.DRAName(), mig.Share)
	}
}

func TestRepeatAndAutoPods(t *testing.T) {
	f := simtest.Fleet(t, `nodes:
  - name: bulk
    instance_type: p5.48xlarge
    repeat: 3
    auto_pods: {team: load, devices_per_pod: 3}
  - name: inf
    instance_type: inf2.24xlarge
    auto_pods: {team: load, workload: {profile: inference-steady}}
pods:
  - name: x
    node: bulk-1
    workload: {profile: idle}
    containers: [{name: c, gpus: [0]}]
`, 3)
	if len(f.Nodes) != 4 {
		t.Fatalf("%d nodes", len(f.Nodes))
	}
	b1, _ := f.Node("bulk-1")
	if len(b1.Pods) != 1+3 { // x, then GPUs 1-3, 4-6, 7
		t.Errorf("bulk-1 has %d pods", len(b1.Pods))
	}
	b0, _ := f.Node("bulk-0")
	if len(b0.Pods) != 3 || len(b0.Pods[2].Containers[0].GPUs) != 2 {
		t.Errorf("bulk-0 pods: %d", len(b0.Pods))
	}
	inf, _ := f.Node("inf")
	if len(inf.Pods) != 6 || inf.Pods[0].Containers[0].Devices[0].Resource != fleet.ResourceNeuronDevice {
		t.Errorf("inf pods: %d", len(inf.Pods))
	}
}
