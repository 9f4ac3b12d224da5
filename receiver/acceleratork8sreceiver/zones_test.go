package acceleratork8sreceiver

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/findingtext"
)

func zoneNode(name, zone string, gpus int64) *corev1.Node {
	alloc := corev1.ResourceList{"cpu": resource.MustParse("96")}
	if gpus > 0 {
		alloc["nvidia.com/gpu"] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"topology.kubernetes.io/zone": zone}},
		Status: corev1.NodeStatus{Allocatable: alloc}}
}

func readyOn(name, node string) *corev1.Pod {
	p := vllmPod(name, "uid-"+name)
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(0)}}
	return p
}

func TestZoneImbalanceFinding(t *testing.T) {
	h := newHarness(t)
	for _, n := range []*corev1.Node{zoneNode("gpu-a", "us-east-1a", 8), zoneNode("gpu-b", "us-east-1b", 8), zoneNode("gpu-c", "us-east-1c", 8),
		zoneNode("cpu-d", "us-east-1d", 0)} {
		require.NoError(t, h.store.Apply(n))
	}
	// Three replicas in 1a, one in 1c, none in 1b (which has GPUs).
	for i, node := range []string{"gpu-a", "gpu-a", "gpu-a", "gpu-c"} {
		require.NoError(t, h.store.Apply(readyOn(fmt.Sprintf("vllm-6d4f9-%d", i), node)))
	}
	h.flushed(func(*state) bool {
		return len(h.r.pods.GetStore().List()) == 4 && len(h.r.nodes.GetStore().List()) == 4
	})

	replicas := map[string]int64{}
	md := h.metrics.AllMetrics()[len(h.metrics.AllMetrics())-1]
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		forEach(metricsOf(rm), accelschema.MetricWorkloadReplicas, func(m pmetric.Metric) {
			zone, _ := rm.Resource().Attributes().Get(accelschema.AttrCloudZone)
			replicas[zone.Str()] = m.Gauge().DataPoints().At(0).IntValue()
		})
	}
	assert.Equal(t, map[string]int64{"us-east-1a": 3, "us-east-1b": 0, "us-east-1c": 1}, replicas, "a zone without GPUs is no candidate")

	require.Equal(t, 1, h.logs.LogRecordCount())
	lr := h.logs.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	a := lr.Attributes().AsRaw()
	assert.Equal(t, accelschema.FindingZoneImbalance, a[accelschema.AttrFindingKind])
	assert.Equal(t, "replicas_us-east-1a=3 replicas_us-east-1b=0 replicas_us-east-1c=1", a[accelschema.AttrFindingEvidence])
	assert.Contains(t, a[accelschema.AttrFindingAction], "topologySpreadConstraint")
	for field, text := range map[string]string{"body": lr.Body().Str(), "evidence": a[accelschema.AttrFindingEvidence].(string), "action": a[accelschema.AttrFindingAction].(string)} {
		assert.Empty(t, findingtext.EmptyFields(text), "%s %q", field, text)
	}

	// The same state again raises nothing; once balanced (2/1/1) nothing either.
	h.flushed(func(*state) bool { return true })
	assert.Equal(t, 1, h.logs.LogRecordCount())
	moved := readyOn("vllm-6d4f9-2", "gpu-b")
	moved.UID = types.UID("uid-vllm-6d4f9-2")
	require.NoError(t, h.store.Apply(moved))
	h.flushed(func(*state) bool {
		o, _, _ := h.r.pods.GetStore().GetByKey("serve/vllm-6d4f9-2")
		return o != nil && o.(*corev1.Pod).Spec.NodeName == "gpu-b"
	})
	assert.Equal(t, 1, h.logs.LogRecordCount())
	h.r.mu.Lock()
	assert.Empty(t, h.r.state.imbalanced)
	h.r.mu.Unlock()
}

// metricsOf wraps one resource's metrics for forEach.
func metricsOf(rm pmetric.ResourceMetrics) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm.CopyTo(md.ResourceMetrics().AppendEmpty())
	return md
}
