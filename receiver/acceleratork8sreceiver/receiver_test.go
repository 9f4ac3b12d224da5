package acceleratork8sreceiver

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kubeapi"
	"github.com/otelcol-accel/otelcol-accel/internal/firstrequest"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver/internal/metadata"
)

// t0 is when the test's pods are created; every phase is measured from it.
var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func at(s float64) metav1.Time {
	return metav1.NewTime(t0.Add(time.Duration(s * float64(time.Second))))
}

type harness struct {
	t       testing.TB
	store   *kubeapi.Store
	r       *k8sReceiver
	metrics *consumertest.MetricsSink
	logs    *consumertest.LogsSink
	clock   atomic.Int64 // unix nanoseconds
	first   *firstrequest.Registry
}

func (h *harness) setNow(t time.Time) { h.clock.Store(t.UnixNano()) }

// newHarness serves an empty cluster from the simulator's Kubernetes API
// (real HTTP list and watch, the field selectors the API server supports)
// and starts the receiver on it through a registry of its own.
func newHarness(t testing.TB) *harness {
	store, err := kubeapi.NewStore(nil)
	require.NoError(t, err)
	srv := kubeapi.NewServer(store)
	srv.Bookmark = 200 * time.Millisecond
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, kubeapi.WriteKubeconfig(kc, hs.URL, "test"))

	cfg := createDefaultConfig().(*Config)
	cfg.APIConfig = k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig, KubeConfig: kc}
	cfg.CollectionInterval = time.Hour // the test flushes
	cfg.ClusterName = "demo"
	require.NoError(t, cfg.Validate())
	h := &harness{t: t, store: store, metrics: new(consumertest.MetricsSink), logs: new(consumertest.LogsSink)}
	h.setNow(t0.Add(time.Hour))
	h.first = firstrequest.New()
	h.r = newReceiver(cfg, receivertest.NewNopSettings(metadata.Type), k8sclient.NewRegistry(k8sclient.Providers{}), h.first,
		func() time.Time { return time.Unix(0, h.clock.Load()).UTC() })
	h.r.metrics, h.r.logs = h.metrics, h.logs
	require.NoError(t, h.r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, h.r.Shutdown(context.Background())) })
	require.Eventually(t, h.r.informers.Synced, 10*time.Second, 10*time.Millisecond)
	return h
}

// vllmPod is a Deployment's pod asking for one GPU.
func vllmPod(name, uid string) *corev1.Pod {
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "serve", Name: name, UID: types.UID(uid), CreationTimestamp: at(0),
			Labels:          map[string]string{"pod-template-hash": "6d4f9", "otelcol-accel.io/model": "meta-llama/Llama-3.1-8B-Instruct"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "vllm-6d4f9", Controller: &yes}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

func podEvent(p *corev1.Pod, uid, reason, message string, when metav1.Time, count int32) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name + "." + uid, UID: types.UID(uid)},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Reason:         reason, Message: message, FirstTimestamp: when, LastTimestamp: when, Count: count, Type: corev1.EventTypeNormal}
}

// flushed waits for the handlers to have seen what was applied (want says
// when), then flushes.
func (h *harness) flushed(want func(*state) bool) {
	require.Eventually(h.t, func() bool {
		h.r.mu.Lock()
		defer h.r.mu.Unlock()
		return want(h.r.state)
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(h.t, h.r.flush(context.Background()))
}

func TestColdStartEveryPhaseFromKnownTimestamps(t *testing.T) {
	h := newHarness(t)
	p := vllmPod("vllm-6d4f9-abcde", "uid-1")
	require.NoError(t, h.store.Apply(p.DeepCopy()))
	h.flushed(func(s *state) bool { return s.waiting["uid-1"] })

	// Scheduled at 4 s; the image pulled in 95.5 s (the kubelet's own
	// figure) and done at 101 s; started at 103 s; Ready at 163 s.
	p.Spec.NodeName = "gpu-node-1"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(4)}}
	require.NoError(t, h.store.Apply(p.DeepCopy()))
	require.NoError(t, h.store.Apply(podEvent(p, "ev-pull", "Pulled",
		`Successfully pulled image "vllm/vllm-openai:v0.11.0" in 1m35.5s (1m36.9s including waiting). Image size: 9876543210 bytes.`, at(101), 1)))
	require.NoError(t, h.store.Apply(podEvent(p, "ev-pull-init", "Pulled", `Container image "busybox:1.36" already present on machine`, at(5), 1)))
	h.flushed(func(s *state) bool { return len(s.pulls["uid-1"]) == 2 })
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "vllm", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(103)}}}}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(163)})
	require.NoError(t, h.store.Apply(p.DeepCopy()))
	h.flushed(func(s *state) bool { return s.measured["uid-1"] })

	require.Equal(t, 1, h.logs.LogRecordCount())
	rl := h.logs.AllLogs()[0].ResourceLogs().At(0)
	lr := rl.ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, accelschema.EventColdStart, lr.EventName())
	want := map[string]float64{
		accelschema.PhaseScheduling:     4,
		accelschema.PhaseImagePull:      95.5,
		accelschema.PhaseContainerStart: 2, // after the last pull (101 s), not after scheduling
		accelschema.PhaseReadiness:      60,
		accelschema.PhaseTotal:          163,
	}
	for phase, secs := range want {
		v, ok := lr.Attributes().Get(accelschema.ColdStartPhaseAttr(phase))
		require.True(t, ok, phase)
		assert.InDelta(t, secs, v.Double(), 1e-9, phase)
	}
	res := rl.Resource().Attributes().AsRaw()
	assert.Equal(t, "vllm", res[accelschema.AttrK8sDeploymentName])
	assert.Equal(t, "meta-llama/Llama-3.1-8B-Instruct", res[accelschema.AttrGenAIRequestModel])
	assert.Equal(t, "gpu-node-1", res[accelschema.AttrK8sNodeName])
	assert.Equal(t, pcommon.NewTimestampFromTime(t0.Add(163*time.Second)), lr.Timestamp())

	// One histogram series per phase, each with the one observation.
	got := histogramsByPhase(t, h.metrics.AllMetrics()[len(h.metrics.AllMetrics())-1])
	require.Len(t, got, len(want))
	for phase, secs := range want {
		dp := got[phase]
		assert.Equal(t, uint64(1), dp.Count(), phase)
		assert.InDelta(t, secs, dp.Sum(), 1e-9, phase)
	}
	// 163 s falls in the (120, 180] bucket.
	assert.Equal(t, uint64(1), got[accelschema.PhaseTotal].BucketCounts().At(8))

	// Turning unready and ready again is no second cold start.
	p.Status.Conditions[1].Status = corev1.ConditionFalse
	require.NoError(t, h.store.Apply(p.DeepCopy()))
	p.Status.Conditions[1] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(400)}
	require.NoError(t, h.store.Apply(p.DeepCopy()))
	h.flushed(func(*state) bool { return true })
	assert.Equal(t, 1, h.logs.LogRecordCount())
}

func TestColdStartNotMeasuredForPodsReadyBeforeTheReceiver(t *testing.T) {
	h := newHarness(t)
	ready := vllmPod("vllm-old", "uid-old")
	ready.Status.Phase = corev1.PodRunning
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(10)}}
	cpu := vllmPod("web", "uid-web")
	cpu.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	require.NoError(t, h.store.Apply(ready))
	require.NoError(t, h.store.Apply(cpu))
	h.flushed(func(s *state) bool { return s.measured["uid-old"] })
	h.r.mu.Lock()
	assert.False(t, h.r.state.waiting["uid-web"], "a pod without accelerators is not followed")
	h.r.mu.Unlock()
	assert.Zero(t, h.logs.LogRecordCount())
}

func TestUnschedulableByResourceInstanceTypeAndZone(t *testing.T) {
	h := newHarness(t)
	pending := func(name, uid, resourceName, zone string) *corev1.Pod {
		p := vllmPod(name, uid)
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceName(resourceName): resource.MustParse("1")}
		p.Spec.NodeSelector = map[string]string{"node.kubernetes.io/instance-type": "p5.48xlarge"}
		if zone != "" {
			p.Spec.NodeSelector["topology.kubernetes.io/zone"] = zone
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/3 nodes are available", LastTransitionTime: at(1)}}
		return p
	}
	a := pending("vllm-a", "uid-a", "nvidia.com/gpu", "us-east-1a")
	b := pending("vllm-b", "uid-b", "nvidia.com/gpu", "us-east-1a")
	c := pending("neuron-c", "uid-c", "aws.amazon.com/neuron", "")
	cpuOnly := pending("web", "uid-w", "cpu", "")
	for _, p := range []*corev1.Pod{a, b, c, cpuOnly} {
		require.NoError(t, h.store.Apply(p))
	}
	require.NoError(t, h.store.Apply(podEvent(a, "ev-a", "FailedScheduling",
		"0/12 nodes are available: 4 Insufficient nvidia.com/gpu, 8 node(s) didn't match Pod's node affinity/selector.", at(2), 3)))
	require.NoError(t, h.store.Apply(podEvent(cpuOnly, "ev-w", "FailedScheduling", "0/12 nodes are available: 12 Insufficient cpu.", at(2), 1)))
	h.flushed(func(s *state) bool { return len(s.lacking["uid-a"]) == 1 && len(h.r.pods.GetStore().List()) == 4 })

	gauge := gaugeCounts(t, h.metrics.AllMetrics()[len(h.metrics.AllMetrics())-1])
	assert.Equal(t, map[string]int64{
		"nvidia.com/gpu|p5.48xlarge|us-east-1a|scheduler": 2,
		"aws.amazon.com/neuron|p5.48xlarge|any|scheduler": 1,
	}, gauge)
	require.Equal(t, 1, h.logs.LogRecordCount(), "one record for the accelerator pod's FailedScheduling, none for the CPU pod's")
	lr := h.logs.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, accelschema.EventUnschedulable, lr.EventName())
	assert.Equal(t, "nvidia.com/gpu", lr.Attributes().AsRaw()[accelschema.AttrCapacityResource])
	assert.Contains(t, lr.Body().Str(), "Insufficient nvidia.com/gpu")

	// The same event again at the same count is not logged twice; once
	// the pods are scheduled, the series fall to 0 once and go.
	require.NoError(t, h.store.Apply(podEvent(a, "ev-a", "FailedScheduling", "0/12 nodes are available: 4 Insufficient nvidia.com/gpu.", at(2), 3)))
	for _, p := range []*corev1.Pod{a, b, c} {
		p.Spec.NodeName = "gpu-node-2"
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(60)}}
		require.NoError(t, h.store.Apply(p))
	}
	h.flushed(func(*state) bool {
		n := 0
		for _, o := range h.r.pods.GetStore().List() {
			if o.(*corev1.Pod).Spec.NodeName != "" {
				n++
			}
		}
		return n == 3
	})
	assert.Equal(t, map[string]int64{
		"nvidia.com/gpu|p5.48xlarge|us-east-1a|scheduler": 0,
		"aws.amazon.com/neuron|p5.48xlarge|any|scheduler": 0,
	}, gaugeCounts(t, h.metrics.AllMetrics()[len(h.metrics.AllMetrics())-1]))
	assert.Equal(t, 1, h.logs.LogRecordCount())
	before := len(h.metrics.AllMetrics())
	require.NoError(t, h.r.flush(context.Background()))
	for _, md := range h.metrics.AllMetrics()[before:] {
		assert.Empty(t, gaugeCounts(t, md), "gone after the zero")
	}
}

func histogramsByPhase(t *testing.T, md pmetric.Metrics) map[string]pmetric.HistogramDataPoint {
	t.Helper()
	out := map[string]pmetric.HistogramDataPoint{}
	forEach(md, accelschema.MetricColdStartDuration, func(m pmetric.Metric) {
		for i := 0; i < m.Histogram().DataPoints().Len(); i++ {
			dp := m.Histogram().DataPoints().At(i)
			v, _ := dp.Attributes().Get(accelschema.AttrColdStartPhase)
			out[v.Str()] = dp
		}
	})
	return out
}

func gaugeCounts(t *testing.T, md pmetric.Metrics) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	forEach(md, accelschema.MetricPodsUnschedulable, func(m pmetric.Metric) {
		for i := 0; i < m.Gauge().DataPoints().Len(); i++ {
			dp := m.Gauge().DataPoints().At(i)
			a := dp.Attributes().AsRaw()
			out[a[accelschema.AttrCapacityResource].(string)+"|"+a[accelschema.AttrCapacityInstanceType].(string)+"|"+
				a[accelschema.AttrCapacityZone].(string)+"|"+a[accelschema.AttrCapacitySource].(string)] = dp.IntValue()
		}
	})
	return out
}

func forEach(md pmetric.Metrics, name string, fn func(pmetric.Metric)) {
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			for k := 0; k < sms.At(j).Metrics().Len(); k++ {
				if m := sms.At(j).Metrics().At(k); m.Name() == name {
					fn(m)
				}
			}
		}
	}
}
