package acceleratork8sreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

func deployment(name string, gpus bool, replicas, ready int32) *appsv1.Deployment {
	limits := corev1.ResourceList{"cpu": resource.MustParse("2")}
	if gpus {
		limits["nvidia.com/gpu"] = resource.MustParse("1")
	}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "serve", Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"otelcol-accel.io/model": "meta-llama/Llama-3.1-70B-Instruct"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Resources: corev1.ResourceRequirements{Limits: limits}}}}}},
		Status: appsv1.DeploymentStatus{Replicas: ready, ReadyReplicas: ready}}
}

func TestScaleUpReportsDecisionToReady(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.store.Apply(deployment("vllm", true, 2, 2)))
	require.NoError(t, h.store.Apply(deployment("web", false, 2, 2)))
	h.flushed(func(s *state) bool { return s.desired[workloadKey{"Deployment", "serve", "vllm"}] == 2 })
	assert.Zero(t, h.logs.LogRecordCount(), "first sight is no scaling")

	// The autoscaler asks for 4 at 10:00:00; one replica is ready at
	// 10:02:30, the fourth at 10:03:40.
	decided := t0
	h.setNow(decided)
	up := deployment("vllm", true, 4, 2)
	require.NoError(t, h.store.Apply(up))
	h.flushed(func(s *state) bool { _, ok := s.scalings[workloadKey{"Deployment", "serve", "vllm"}]; return ok })
	h.setNow(t0.Add(150 * time.Second))
	up.Status.Replicas, up.Status.ReadyReplicas = 4, 3
	require.NoError(t, h.store.Apply(up.DeepCopy()))
	h.flushed(func(s *state) bool { return true })
	// The web Deployment (no accelerator) scaling is not followed.
	require.NoError(t, h.store.Apply(deployment("web", false, 8, 2)))
	h.setNow(t0.Add(220 * time.Second))
	up.Status.ReadyReplicas = 4
	require.NoError(t, h.store.Apply(up.DeepCopy()))
	h.flushed(func(s *state) bool { _, ok := s.scalings[workloadKey{"Deployment", "serve", "vllm"}]; return !ok })

	require.Equal(t, 1, h.logs.LogRecordCount())
	rl := h.logs.AllLogs()[len(h.logs.AllLogs())-1].ResourceLogs().At(0)
	lr := rl.ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, accelschema.EventScaling, lr.EventName())
	a := lr.Attributes().AsRaw()
	assert.Equal(t, int64(2), a[accelschema.AttrScalingFrom])
	assert.Equal(t, int64(4), a[accelschema.AttrScalingTo])
	assert.Equal(t, accelschema.ScalingUp, a[accelschema.AttrScalingDirection])
	assert.Equal(t, accelschema.ScalingReady, a[accelschema.AttrScalingOutcome])
	assert.InDelta(t, 220.0, a[accelschema.AttrScalingDecisionToReady], 1e-9)
	assert.Equal(t, "vllm", rl.Resource().Attributes().AsRaw()[accelschema.AttrK8sDeploymentName])
	assert.Equal(t, "meta-llama/Llama-3.1-70B-Instruct", rl.Resource().Attributes().AsRaw()[accelschema.AttrGenAIRequestModel])
}

func TestScaleDownAndSupersededScaling(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.store.Apply(deployment("vllm", true, 4, 4)))
	h.flushed(func(s *state) bool { return s.desired[workloadKey{"Deployment", "serve", "vllm"}] == 4 })
	h.setNow(t0)
	require.NoError(t, h.store.Apply(deployment("vllm", true, 6, 4))) // up to 6 …
	h.flushed(func(s *state) bool { return s.desired[workloadKey{"Deployment", "serve", "vllm"}] == 6 })
	h.setNow(t0.Add(30 * time.Second))
	require.NoError(t, h.store.Apply(deployment("vllm", true, 3, 4))) // … then down to 3 before it was ready
	h.flushed(func(s *state) bool { return s.desired[workloadKey{"Deployment", "serve", "vllm"}] == 3 })
	h.setNow(t0.Add(75 * time.Second))
	require.NoError(t, h.store.Apply(deployment("vllm", true, 3, 3)))
	h.flushed(func(s *state) bool { _, ok := s.scalings[workloadKey{"Deployment", "serve", "vllm"}]; return !ok })

	var got []map[string]any
	for _, ld := range h.logs.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			got = append(got, ld.ResourceLogs().At(i).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw())
		}
	}
	require.Len(t, got, 2)
	assert.Equal(t, accelschema.ScalingSuperseded, got[0][accelschema.AttrScalingOutcome])
	assert.Equal(t, int64(6), got[0][accelschema.AttrScalingTo])
	assert.NotContains(t, got[0], accelschema.AttrScalingDecisionToReady)
	assert.Equal(t, accelschema.ScalingDown, got[1][accelschema.AttrScalingDirection])
	assert.Equal(t, accelschema.ScalingReady, got[1][accelschema.AttrScalingOutcome])
	assert.InDelta(t, 45.0, got[1][accelschema.AttrScalingDecisionToReady], 1e-9)
}
