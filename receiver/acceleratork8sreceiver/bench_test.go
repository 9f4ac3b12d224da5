package acceleratork8sreceiver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	corev1 "k8s.io/api/core/v1"
)

// BenchmarkFlush is the receiver's work per collection interval on a
// cluster of 120 GPU nodes in three zones: 1 000 ready accelerator pods of
// 50 Deployments (their zones and replicas), 200 unschedulable pods, and
// cold-start histograms of the 50 workloads.
//
//	go test -run '^$' -bench Flush -benchmem ./receiver/acceleratork8sreceiver/
func BenchmarkFlush(b *testing.B) {
	h := newHarness(b)
	h.r.metrics, h.r.logs = consumertest.NewNop(), consumertest.NewNop()
	for i := 0; i < 120; i++ {
		if err := h.store.Apply(zoneNode(fmt.Sprintf("gpu-%03d", i), fmt.Sprintf("us-east-1%c", 'a'+i%3), 8)); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 1000; i++ {
		p := readyOn(fmt.Sprintf("vllm-%02d-x%04d", i%50, i), fmt.Sprintf("gpu-%03d", i%120))
		p.OwnerReferences[0].Name = fmt.Sprintf("vllm-%02d-6d4f9", i%50)
		if err := h.store.Apply(p); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 200; i++ {
		p := vllmPod(fmt.Sprintf("pending-%03d", i), fmt.Sprintf("uid-pending-%03d", i))
		p.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("us-east-1%c", 'a'+i%3)}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, LastTransitionTime: at(1)}}
		if err := h.store.Apply(p); err != nil {
			b.Fatal(err)
		}
	}
	for len(h.r.pods.GetStore().List()) != 1200 || len(h.r.nodes.GetStore().List()) != 120 {
		time.Sleep(10 * time.Millisecond)
	}
	h.r.mu.Lock()
	for i := 0; i < 50; i++ {
		w := workload{namespace: "serve", kind: "Deployment", name: fmt.Sprintf("vllm-%02d", i)}
		for _, ph := range []string{"scheduling", "image_pull", "container_start", "readiness", "total"} {
			h.r.state.hists.observe(w, ph, float64(i))
		}
	}
	h.r.mu.Unlock()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := h.r.flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(1200, "pods/flush")
}
