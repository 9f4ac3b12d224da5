package acceleratork8sreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
)

// records returns every log record sent so far with its event name.
func records(h *harness, event string) []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range h.logs.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				for k := 0; k < sls.At(j).LogRecords().Len(); k++ {
					if lr := sls.At(j).LogRecords().At(k); lr.EventName() == event {
						out = append(out, lr)
					}
				}
			}
		}
	}
	return out
}

// watching waits until the receiver's optional kinds are watched and listed.
func (h *harness) watching(kinds ...k8sclient.Kind) {
	require.Eventually(h.t, func() bool {
		for _, k := range kinds {
			inf, err := h.r.informers.Informer(k)
			if err != nil || !inf.HasSynced() {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond)
}

func hpa(desired, current int32, lastScale *metav1.Time, conds ...autoscalingv2.HorizontalPodAutoscalerCondition) *autoscalingv2.HorizontalPodAutoscaler {
	minReplicas := int32(1)
	return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "serve", Name: "vllm-hpa"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "vllm", APIVersion: "apps/v1"},
			MinReplicas: &minReplicas, MaxReplicas: 4},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{DesiredReplicas: desired, CurrentReplicas: current, LastScaleTime: lastScale, Conditions: conds}}
}

// readyReplica is a Ready pod of the vllm Deployment, Ready since ready.
func readyReplica(i int, ready metav1.Time) *corev1.Pod {
	p := vllmPod("vllm-6d4f9-r"+string(rune('a'+i)), "uid-r"+string(rune('a'+i)))
	p.Spec.NodeName = "gpu-node-1"
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(-600)},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: ready}}
	return p
}

// An HPA asks for 4 replicas at t0 (its lastScaleTime); the receiver sees
// the Deployment change 7 s later, before the HPA's status; the fourth
// replica turns Ready at 212 s. The scaling is timed from the HPA's
// decision to that Ready, not from when the receiver saw either, and the
// HPA's decision is a record of its own.
func TestScaleUpTimedFromTheHPAsDecisionToTheLastReady(t *testing.T) {
	h := newHarness(t)
	h.watching(k8sclient.HorizontalPodAutoscalers)
	able := autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.AbleToScale, Status: "True", Reason: "ReadyForNewScale"}
	require.NoError(t, h.store.Apply(deployment("vllm", true, 2, 2)))
	// The HPA after its Deployment is known: an HPA seen first (the two
	// watches keep no order) is kept without a record.
	h.flushed(func(s *state) bool { return s.desired[workloadKey{"Deployment", "serve", "vllm"}] == 2 })
	require.NoError(t, h.store.Apply(hpa(2, 2, nil, able)))
	for i := range 2 {
		require.NoError(t, h.store.Apply(readyReplica(i, at(-500))))
	}
	h.flushed(func(s *state) bool {
		_, ok := s.hpas[autoscalerKey{"serve", "vllm-hpa"}]
		return ok && s.desired[workloadKey{"Deployment", "serve", "vllm"}] == 2
	})

	h.setNow(t0.Add(7 * time.Second))
	require.NoError(t, h.store.Apply(deployment("vllm", true, 4, 2)))
	h.flushed(func(s *state) bool { _, ok := s.scalings[workloadKey{"Deployment", "serve", "vllm"}]; return ok })
	last := at(0)
	able.Reason = "SucceededRescale"
	require.NoError(t, h.store.Apply(hpa(4, 2, &last, able)))
	h.flushed(func(s *state) bool { return s.scalings[workloadKey{"Deployment", "serve", "vllm"}].hpa == "vllm-hpa" })

	require.NoError(t, h.store.Apply(readyReplica(2, at(150))))
	require.NoError(t, h.store.Apply(readyReplica(3, at(212))))
	h.flushed(func(s *state) bool { return len(h.r.pods.GetStore().List()) == 4 })
	h.setNow(t0.Add(230 * time.Second)) // the receiver sees the Deployment's ready count later still
	require.NoError(t, h.store.Apply(deployment("vllm", true, 4, 4)))
	h.flushed(func(s *state) bool { _, ok := s.scalings[workloadKey{"Deployment", "serve", "vllm"}]; return !ok })

	scalings := records(h, accelschema.EventScaling)
	require.Len(t, scalings, 1)
	a := scalings[0].Attributes().AsRaw()
	assert.InDelta(t, 212.0, a[accelschema.AttrScalingDecisionToReady], 1e-9)
	assert.Equal(t, accelschema.ScalingDecidedByHPA, a[accelschema.AttrScalingDecidedBy])
	assert.Equal(t, "vllm-hpa", a[accelschema.AttrAutoscalerName])

	decisions := records(h, accelschema.EventAutoscaler)
	require.Len(t, decisions, 2, "the first sight of the HPA and its decision; no record for the unchanged resyncs")
	d := decisions[1].Attributes().AsRaw()
	assert.Equal(t, int64(4), d[accelschema.AttrAutoscalerDesired])
	assert.Equal(t, int64(2), d[accelschema.AttrAutoscalerCurrent])
	assert.Equal(t, int64(4), d[accelschema.AttrAutoscalerMax])
	assert.Equal(t, t0.Format(time.RFC3339), d[accelschema.AttrAutoscalerLastScaleTime])
	assert.Equal(t, "AbleToScale=True(SucceededRescale)", d[accelschema.AttrAutoscalerConditions])
	assert.Equal(t, false, d[accelschema.AttrAutoscalerLimited])

	// Held at its maximum: a warning record that says so.
	limited := autoscalingv2.HorizontalPodAutoscalerCondition{Type: autoscalingv2.ScalingLimited, Status: "True", Reason: "TooManyReplicas"}
	require.NoError(t, h.store.Apply(hpa(4, 4, &last, able, limited)))
	h.flushed(func(s *state) bool { return s.hpas[autoscalerKey{"serve", "vllm-hpa"}].Limited })
	decisions = records(h, accelschema.EventAutoscaler)
	require.Len(t, decisions, 3)
	assert.Equal(t, plog.SeverityNumberWarn, decisions[2].SeverityNumber())
	assert.Contains(t, decisions[2].Body().Str(), "held at its limit")
}

// Without an HPA, the decision is when the receiver saw the change.
func TestScalingWithoutAnHPAIsTimedFromItsSight(t *testing.T) {
	h := newHarness(t)
	h.watching(k8sclient.HorizontalPodAutoscalers)
	require.NoError(t, h.store.Apply(deployment("vllm", true, 1, 1)))
	h.flushed(func(s *state) bool { return s.desired[workloadKey{"Deployment", "serve", "vllm"}] == 1 })
	h.setNow(t0)
	require.NoError(t, h.store.Apply(deployment("vllm", true, 2, 1)))
	h.flushed(func(s *state) bool { _, ok := s.scalings[workloadKey{"Deployment", "serve", "vllm"}]; return ok })
	h.setNow(t0.Add(40 * time.Second))
	require.NoError(t, h.store.Apply(deployment("vllm", true, 2, 2)))
	h.flushed(func(s *state) bool { _, ok := s.scalings[workloadKey{"Deployment", "serve", "vllm"}]; return !ok })
	scalings := records(h, accelschema.EventScaling)
	require.Len(t, scalings, 1)
	a := scalings[0].Attributes().AsRaw()
	assert.Equal(t, accelschema.ScalingDecidedByUnknown, a[accelschema.AttrScalingDecidedBy])
	assert.InDelta(t, 40.0, a[accelschema.AttrScalingDecisionToReady], 1e-9)
	assert.Empty(t, records(h, accelschema.EventAutoscaler))
}

func leaderWorkerSet(replicas, ready int64, gpus bool) *unstructured.Unstructured {
	limits := map[string]any{"cpu": "8"}
	if gpus {
		limits["nvidia.com/gpu"] = "8"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
		"metadata": map[string]any{"namespace": "serve", "name": "llama-405b", "uid": "lws-1"},
		"spec": map[string]any{"replicas": replicas, "leaderWorkerTemplate": map[string]any{"size": int64(2),
			"workerTemplate": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"otelcol-accel.io/model": "meta-llama/Llama-3.1-405B-Instruct"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "vllm",
					"resources": map[string]any{"limits": limits}}}}}}},
		"status": map[string]any{"replicas": replicas, "readyReplicas": ready},
	}}
}

// A LeaderWorkerSet is a workload like a Deployment: its groups' changes
// are scalings; one that asks for no accelerator is not followed.
func TestLeaderWorkerSetScaling(t *testing.T) {
	h := newHarness(t)
	h.watching(k8sclient.LeaderWorkerSets)
	require.NoError(t, h.store.Apply(leaderWorkerSet(1, 1, true)))
	h.flushed(func(s *state) bool { return s.desired[workloadKey{"LeaderWorkerSet", "serve", "llama-405b"}] == 1 })
	h.setNow(t0)
	require.NoError(t, h.store.Apply(leaderWorkerSet(2, 1, true)))
	h.flushed(func(s *state) bool {
		_, ok := s.scalings[workloadKey{"LeaderWorkerSet", "serve", "llama-405b"}]
		return ok
	})
	h.setNow(t0.Add(300 * time.Second))
	require.NoError(t, h.store.Apply(leaderWorkerSet(2, 2, true)))
	h.flushed(func(s *state) bool {
		_, ok := s.scalings[workloadKey{"LeaderWorkerSet", "serve", "llama-405b"}]
		return !ok
	})

	scalings := records(h, accelschema.EventScaling)
	require.Len(t, scalings, 1)
	a := scalings[0].Attributes().AsRaw()
	assert.Equal(t, int64(1), a[accelschema.AttrScalingFrom])
	assert.Equal(t, int64(2), a[accelschema.AttrScalingTo])
	assert.InDelta(t, 300.0, a[accelschema.AttrScalingDecisionToReady], 1e-9)
	rl := h.logs.AllLogs()[len(h.logs.AllLogs())-1].ResourceLogs().At(0).Resource().Attributes().AsRaw()
	assert.Equal(t, "llama-405b", rl[accelschema.AttrWorkloadName])
	assert.Equal(t, "meta-llama/Llama-3.1-405B-Instruct", rl[accelschema.AttrGenAIRequestModel])

	cpu := leaderWorkerSet(1, 1, false)
	cpu.SetName("cpu-batch")
	cpu.SetUID(types.UID("lws-2"))
	require.NoError(t, h.store.Apply(cpu))
	cpu = leaderWorkerSet(3, 1, false)
	cpu.SetName("cpu-batch")
	cpu.SetUID(types.UID("lws-2"))
	require.NoError(t, h.store.Apply(cpu))
	inf, err := h.r.informers.Informer(k8sclient.LeaderWorkerSets)
	require.NoError(t, err)
	h.flushed(func(*state) bool {
		o, ok, _ := inf.GetStore().GetByKey("serve/cpu-batch")
		return ok && o.(*unstructured.Unstructured).Object["spec"].(map[string]any)["replicas"] == int64(3)
	})
	_, followed := h.r.state.desired[workloadKey{"LeaderWorkerSet", "serve", "cpu-batch"}]
	assert.False(t, followed, "a LeaderWorkerSet without accelerators is not followed")
}

func nodeClaim(name, uid string, gpus string, launched map[string]any) *unstructured.Unstructured {
	requests := map[string]any{"cpu": "4"}
	if gpus != "" {
		requests["nvidia.com/gpu"] = gpus
	}
	obj := map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
		"metadata": map[string]any{"name": name, "uid": uid},
		"spec": map[string]any{
			"resources": map[string]any{"requests": requests},
			"requirements": []any{
				map[string]any{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": []any{"p5.48xlarge"}},
				map[string]any{"key": "topology.kubernetes.io/zone", "operator": "In", "values": []any{"us-east-1a"}},
				map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"on-demand", "spot"}},
			},
		},
	}
	if launched != nil {
		obj["status"] = map[string]any{"conditions": []any{launched}}
	}
	return &unstructured.Unstructured{Object: obj}
}

// A NodeClaim for GPUs that Karpenter could not launch is counted by
// resource, instance type and zone (source karpenter) and logged once;
// once Karpenter deletes it, it is still counted at the next flush, then
// 0, then gone. A claim that launched, or asks for no accelerator, is not.
func TestKarpenterInsufficientCapacity(t *testing.T) {
	h := newHarness(t)
	h.watching(k8sclient.NodeClaims)
	ice := map[string]any{"type": "Launched", "status": "False", "reason": "InsufficientCapacity",
		"message": "all requested instance types were unavailable during launch", "lastTransitionTime": "2026-12-01T10:00:05Z"}
	launched := map[string]any{"type": "Launched", "status": "True", "reason": "Launched"}
	require.NoError(t, h.store.Apply(nodeClaim("gpu-abc12", "nc-1", "8", nil)))
	require.NoError(t, h.store.Apply(nodeClaim("cpu-zz999", "nc-2", "", ice)))
	require.NoError(t, h.store.Apply(nodeClaim("gpu-def34", "nc-3", "8", launched)))
	require.NoError(t, h.store.Apply(nodeClaim("gpu-abc12", "nc-1", "8", ice)))
	h.flushed(func(s *state) bool { _, ok := s.claims["nc-1"]; return ok })
	h.flushed(func(*state) bool { return true }) // a resync-like second flush: no second record
	assert.Equal(t, map[string]int64{"nvidia.com/gpu|p5.48xlarge|us-east-1a|karpenter": 1}, gaugeCounts(t, h.metrics.AllMetrics()[len(h.metrics.AllMetrics())-1]))
	recs := records(h, accelschema.EventUnschedulable)
	require.Len(t, recs, 1)
	a := recs[0].Attributes().AsRaw()
	assert.Equal(t, accelschema.CapacitySourceKarpenter, a[accelschema.AttrCapacitySource])
	assert.Equal(t, "InsufficientCapacity", a[accelschema.AttrK8sReason])
	assert.Equal(t, "gpu-abc12", a[accelschema.AttrCapacityNodeClaim])
	assert.Equal(t, "p5.48xlarge", a[accelschema.AttrCapacityInstanceType])
	assert.Equal(t, "us-east-1a", a[accelschema.AttrCapacityZone])
	assert.Equal(t, time.Date(2026, 12, 1, 10, 0, 5, 0, time.UTC), recs[0].Timestamp().AsTime())
	assert.Contains(t, recs[0].Body().Str(), "all requested instance types were unavailable")

	require.NoError(t, h.store.Delete(nodeClaim("gpu-abc12", "nc-1", "8", ice)))
	h.flushed(func(s *state) bool { _, ok := s.claims["nc-1"]; return !ok })
	assert.Equal(t, map[string]int64{"nvidia.com/gpu|p5.48xlarge|us-east-1a|karpenter": 1}, gaugeCounts(t, h.metrics.AllMetrics()[len(h.metrics.AllMetrics())-1]),
		"deleted since the last flush: still counted once")
	require.NoError(t, h.r.flush(context.Background()))
	assert.Equal(t, map[string]int64{"nvidia.com/gpu|p5.48xlarge|us-east-1a|karpenter": 0}, gaugeCounts(t, h.metrics.AllMetrics()[len(h.metrics.AllMetrics())-1]))
	before := len(h.metrics.AllMetrics())
	require.NoError(t, h.r.flush(context.Background()))
	for _, md := range h.metrics.AllMetrics()[before:] {
		assert.Empty(t, gaugeCounts(t, md))
	}
	assert.Len(t, records(h, accelschema.EventUnschedulable), 1)
}
