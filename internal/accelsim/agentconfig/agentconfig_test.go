package agentconfig

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
)

func TestOverlayPointsTheAgentAtItsNode(t *testing.T) {
	f := &endpoints.File{Cluster: "demo", Kubeconfig: "/tmp/sim/kubeconfig"}
	gpu := endpoints.Node{Name: "gpu-a", Kind: "nvidia", DCGMExporterURL: "http://127.0.0.1:9400/metrics", PodResourcesSocket: "/tmp/sim/gpu-a/kubelet.sock",
		Inference: []endpoints.InferenceTarget{{URL: "http://127.0.0.1:8000/metrics", Server: "vllm", Model: "m", Pod: "p", Namespace: "ns", PodUID: "uid-1"}}}
	raw, err := Overlay(f, gpu)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	get := func(path ...string) any {
		var cur any = doc
		for _, k := range path {
			cur = cur.(map[string]any)[k]
		}
		return cur
	}
	if get("receivers", "dcgm", "endpoint") != gpu.DCGMExporterURL || get("receivers", "dcgm", "source") != "dcgm_exporter" {
		t.Errorf("dcgm receiver: %v", get("receivers", "dcgm"))
	}
	target := get("receivers", "inference", "targets").([]any)[0].(map[string]any)
	if target["pod"].(map[string]any)["uid"] != "uid-1" {
		t.Errorf("the inference target must carry its pod's uid for the join: %v", target)
	}
	attrs := get("processors", "accelerator_attributes").(map[string]any)
	if attrs["pod_resources_socket"] != gpu.PodResourcesSocket || attrs["node_name"] != "gpu-a" || attrs["cluster_name"] != "demo" {
		t.Errorf("attributes processor: %v", attrs)
	}
	if r := get("service", "pipelines", "logs", "receivers").([]any); len(r) != 1 || r[0] != "dcgm" {
		t.Errorf("logs receivers: %v", r)
	}

	neuron := endpoints.Node{Name: "trn-a", Kind: "neuron", NeuronMonitor: &endpoints.Command{Path: "/tmp/sim/trn-a/neuron-monitor"}}
	raw, err = Overlay(f, neuron)
	if err != nil || !strings.Contains(string(raw), "command: /tmp/sim/trn-a/neuron-monitor") || strings.Contains(string(raw), "dcgm") {
		t.Errorf("neuron overlay (%v):\n%s", err, raw)
	}
	if _, err := Overlay(f, endpoints.Node{Name: "x", Kind: "nvidia"}); err == nil {
		t.Error("an NVIDIA node without a dcgm-exporter URL must be refused")
	}
}
