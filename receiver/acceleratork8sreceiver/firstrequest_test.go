package acceleratork8sreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// readyPod takes a pod through Pending to Ready at 163 s (scheduled at 4 s,
// started at 103 s), as the kubelet would.
func (h *harness) readyPod(name, uid string) *corev1.Pod {
	p := vllmPod(name, uid)
	require.NoError(h.t, h.store.Apply(p.DeepCopy()))
	h.flushed(func(s *state) bool { return s.waiting[p.UID] })
	p.Spec.NodeName = "gpu-node-1"
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(4)},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(163)},
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "vllm", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(103)}}}}
	require.NoError(h.t, h.store.Apply(p.DeepCopy()))
	h.flushed(func(s *state) bool { return s.measured[p.UID] })
	return p
}

func TestColdStartWaitsForTheFirstRequest(t *testing.T) {
	h := newHarness(t)
	defer h.first.AddProducer()() // an inference receiver runs in this collector
	h.setNow(t0.Add(170 * time.Second))
	h.readyPod("vllm-a", "uid-a")
	assert.Zero(t, h.logs.LogRecordCount(), "ready, but no request served yet")

	// The inference receiver sees the first finished request 20 s after Ready.
	h.first.Observe("uid-a", t0.Add(183*time.Second))
	h.setNow(t0.Add(190 * time.Second))
	h.flushed(func(*state) bool { return true })
	require.Equal(t, 1, h.logs.LogRecordCount())
	lr := h.logs.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	v, ok := lr.Attributes().Get(accelschema.ColdStartPhaseAttr(accelschema.PhaseFirstRequest))
	require.True(t, ok)
	assert.InDelta(t, 20.0, v.Double(), 1e-9)
	got := histogramsByPhase(t, h.metrics.AllMetrics()[len(h.metrics.AllMetrics())-1])
	assert.Equal(t, uint64(1), got[accelschema.PhaseFirstRequest].Count())
	assert.InDelta(t, 163.0, got[accelschema.PhaseTotal].Sum(), 1e-9, "total stays creation → Ready")
}

func TestColdStartReportedWithoutFirstRequestAfterTheWait(t *testing.T) {
	h := newHarness(t)
	defer h.first.AddProducer()()
	h.setNow(t0.Add(170 * time.Second))
	h.readyPod("vllm-b", "uid-b")
	h.setNow(t0.Add(163*time.Second + h.r.cfg.FirstRequestWait - time.Second))
	h.flushed(func(*state) bool { return true })
	assert.Zero(t, h.logs.LogRecordCount(), "still within first_request_wait")
	h.setNow(t0.Add(163*time.Second + h.r.cfg.FirstRequestWait))
	h.flushed(func(*state) bool { return true })
	require.Equal(t, 1, h.logs.LogRecordCount())
	lr := h.logs.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	_, ok := lr.Attributes().Get(accelschema.ColdStartPhaseAttr(accelschema.PhaseFirstRequest))
	assert.False(t, ok, "no first request, no such phase")
	_, ok = lr.Attributes().Get(accelschema.ColdStartPhaseAttr(accelschema.PhaseReadiness))
	assert.True(t, ok)
}
