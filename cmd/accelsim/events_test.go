package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/findingtext"
)

// Lines in the format the cloudwatch_emf exporter's file output writes for
// log records: body and severity, then record and resource attributes,
// flattened.
const (
	findingLine = `{"body":"vllm-embed holds an A100 it uses 8% of","severity_text":"WARN","severity_number":13,"event.name":"accelerator.finding",` +
		`"accelerator.finding.kind":"rightsizing","accelerator.finding.action":"move to a smaller MIG profile","accelerator.finding.target":"2g.10gb",` +
		`"accelerator.finding.monthly_saving":1432.5,"accelerator.finding.evidence":"activity_p95=0.08 memory_peak=6.1GiB",` +
		`"hw.id":"GPU-1234","k8s.node.name":"gpu-a100-a","k8s.namespace.name":"search","accelerator.workload.name":"vllm-embed","accelerator.team":"search"}`
	healthLine = `{"body":"XID 79: GPU has fallen off the bus","severity_text":"ERROR","severity_number":17,"event.name":"accelerator.health.xid",` +
		`"accelerator.xid":79,"hw.state":"failed","accelerator.health.action":"reboot_node","accelerator.health.description":"the GPU is no longer reachable over PCIe",` +
		`"accelerator.health.sources":"dcgm_exporter,kernel_log","hw.id":"GPU-9999","k8s.node.name":"gpu-h200-a"}`
	otherLine = `{"body":"something else","severity_text":"INFO"}`
)

func TestFormatEvent(t *testing.T) {
	got := formatEvent([]byte(findingLine))
	for _, want := range []string{"FINDING", "rightsizing", "search/vllm-embed (team search)", "gpu-a100-a GPU-1234", "move to a smaller MIG profile → 2g.10gb", "saves ~$1432/month", "activity_p95=0.08"} {
		if !strings.Contains(got, want) {
			t.Errorf("finding line %q lacks %q", got, want)
		}
	}
	got = formatEvent([]byte(healthLine))
	for _, want := range []string{"HEALTH", "xid", "gpu-h200-a GPU-9999 XID 79", "failed → reboot_node", "no longer reachable", "[from dcgm_exporter+kernel_log]"} {
		if !strings.Contains(got, want) {
			t.Errorf("health line %q lacks %q", got, want)
		}
	}
	if got := formatEvent([]byte(otherLine)); got != "" {
		t.Errorf("other events print nothing, got %q", got)
	}
	if got := formatEvent([]byte(`{"truncated`)); got != "" {
		t.Errorf("a broken line prints nothing, got %q", got)
	}
}

func TestEventsFollowsAGrowingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var out syncWriter
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- printEvents(ctx, path, true, &out) }()

	// The file appears later, and a line arrives in two writes.
	time.Sleep(100 * time.Millisecond)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(otherLine + "\n" + findingLine[:40]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	if _, err := f.WriteString(findingLine[40:] + "\n" + healthLine + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "\n") < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "FINDING") || !strings.HasPrefix(lines[1], "HEALTH") {
		t.Fatalf("got %q", out.String())
	}
}

type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// Every kind of finding prints a line with no field left empty, whatever
// optional attribute its producer leaves out: an endpoint on several nodes
// (no k8s.node.name, accelerator.finding.nodes), a workload finding with
// no device or node (zone_imbalance), a device's finding with no holder.
func TestEveryFindingKindReadsWell(t *testing.T) {
	for kind, line := range map[string]string{
		"latency_regression on several nodes": `{"body":"latency_regression of support/vllm-support (mistralai/Mistral-7B-Instruct-v0.3) on 2 nodes (gpu-l4-a, gpu-l4-b): queueing; add replicas",` +
			`"event.name":"accelerator.finding","accelerator.finding.kind":"latency_regression","accelerator.finding.cause":"queueing",` +
			`"accelerator.finding.evidence":"cause=queueing ttft_p95=4.1 ttft_baseline_p95=0.2","accelerator.finding.action":"add replicas",` +
			`"accelerator.finding.nodes":"gpu-l4-a,gpu-l4-b","accelerator.inference.endpoint":"support/vllm-support","k8s.namespace.name":"support",` +
			`"accelerator.workload.name":"vllm-support","accelerator.team":"support","gen_ai.request.model":"mistralai/Mistral-7B-Instruct-v0.3"}`,
		"latency_regression on one node": `{"event.name":"accelerator.finding","accelerator.finding.kind":"latency_regression","accelerator.finding.cause":"throttling",` +
			`"accelerator.finding.evidence":"cause=throttling ttft_p95=0.42 ttft_baseline_p95=0.23 throttle_thermal=1","accelerator.finding.action":"check the device's cooling",` +
			`"k8s.node.name":"gpu-h100-a","k8s.namespace.name":"search","accelerator.workload.name":"vllm-llama","accelerator.team":"search"}`,
		"latency_regression outside Kubernetes": `{"event.name":"accelerator.finding","accelerator.finding.kind":"latency_regression","accelerator.finding.cause":"undetermined",` +
			`"accelerator.finding.evidence":"cause=undetermined itl_p95=0.09 itl_baseline_p95=0.03","accelerator.finding.action":"compare the endpoint's traces",` +
			`"accelerator.inference.endpoint":"10.0.0.7:8000"}`,
		"zone_imbalance": `{"body":"zone_imbalance: chat/llm-serving us-east-1a=3 us-east-1b=0; spread the replicas","event.name":"accelerator.finding",` +
			`"accelerator.finding.kind":"zone_imbalance","accelerator.finding.evidence":"replicas_us-east-1a=3 replicas_us-east-1b=0",` +
			`"accelerator.finding.action":"spread the replicas across zones","k8s.namespace.name":"chat","accelerator.workload.name":"llm-serving"}`,
		"rightsizing on a MIG instance": `{"event.name":"accelerator.finding","accelerator.finding.kind":"rightsizing","accelerator.finding.action":"move chat/sglang-qwen to a 2g.20gb MIG instance",` +
			`"accelerator.finding.target":"2g.20gb","accelerator.finding.monthly_saving":310.2,"accelerator.finding.evidence":"peak_memory_ratio=0.210 current=4g.40gb",` +
			`"hw.id":"MIG-1","k8s.node.name":"gpu-h100-a","accelerator.partition.type":"mig","accelerator.partition.id":"1:0",` +
			`"k8s.namespace.name":"chat","accelerator.workload.name":"sglang-qwen","accelerator.team":"chat"}`,
		"unhealthy_capacity with no holder": `{"event.name":"accelerator.finding","accelerator.finding.kind":"unhealthy_capacity",` +
			`"accelerator.finding.action":"reboot_node: reboot the node (XID 79, GPU_HAS_FALLEN_OFF_THE_BUS: the GPU is gone)","accelerator.finding.target":"reboot_node",` +
			`"accelerator.finding.monthly_saving":2100,"accelerator.finding.evidence":"hw.state=failed failure_mode=fallen_off_bus xid=79 price_per_hour=2.8767",` +
			`"hw.id":"GPU-6","k8s.node.name":"gpu-h200-a"}`,
		"training_efficiency": `{"event.name":"accelerator.finding","accelerator.finding.kind":"training_efficiency",` +
			`"accelerator.finding.action":"find what starves vision/vit-finetune on NVIDIA H100 80GB HBM3","accelerator.finding.target":"accelerator.tensor.active>=0.570",` +
			`"accelerator.finding.monthly_saving":800,"accelerator.finding.evidence":"signal=accelerator.tensor.active window_mean=0.28 baseline=0.57",` +
			`"hw.id":"GPU-7","k8s.node.name":"gpu-h100-a","k8s.namespace.name":"vision","accelerator.workload.name":"vit-finetune","accelerator.team":"vision"}`,
		"inference_under_capacity": `{"event.name":"accelerator.finding","accelerator.finding.kind":"inference_under_capacity",` +
			`"accelerator.finding.action":"serve search/vllm-embed from a 1g.10gb MIG instance","accelerator.finding.target":"1g.10gb",` +
			`"accelerator.finding.monthly_saving":900,"accelerator.finding.evidence":"peak_activity=0.080 peak_kv_cache=0.100 max_waiting=0",` +
			`"hw.id":"GPU-4","k8s.node.name":"gpu-a100-a","k8s.namespace.name":"search","accelerator.workload.name":"vllm-embed","accelerator.team":"search"}`,
	} {
		got := formatEvent([]byte(line))
		if !strings.HasPrefix(got, "FINDING") {
			t.Errorf("%s: %q is not a finding line", kind, got)
			continue
		}
		if empty := findingtext.EmptyFields(got); len(empty) > 0 {
			t.Errorf("%s: %q has empty fields: %v", kind, got, empty)
		}
	}
	if got := formatEvent([]byte(`{"event.name":"accelerator.finding","accelerator.finding.kind":"latency_regression","accelerator.finding.nodes":"a,b,c,d,e","accelerator.finding.action":"x"}`)); !strings.Contains(got, " on 5 nodes (a, b, c, …): x") {
		t.Errorf("several nodes: %q", got)
	}
}
