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
