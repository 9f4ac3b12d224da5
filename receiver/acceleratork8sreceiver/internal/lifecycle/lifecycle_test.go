package lifecycle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParsePull(t *testing.T) {
	for _, c := range []struct {
		msg      string
		want     time.Duration
		measured bool
	}{
		{`Successfully pulled image "vllm/vllm-openai:v0.11.0" in 1m35.5s (1m36.9s including waiting). Image size: 9876543210 bytes.`, 95500 * time.Millisecond, true},
		{`Successfully pulled image "nginx:1.27" in 850ms (850ms including waiting)`, 850 * time.Millisecond, true},
		{`Successfully pulled image "nginx:1.27" in 3.2s`, 3200 * time.Millisecond, true}, // before kubelet 1.28
		{`Container image "busybox:1.36" already present on machine`, 0, true},
		{`Pulling image "nginx"`, 0, false},
		{`Successfully pulled image "x" in soon`, 0, false},
	} {
		p := ParsePull(&corev1.Event{Message: c.msg})
		assert.Equal(t, c.measured, p.Measured, c.msg)
		assert.Equal(t, c.want, p.Duration, c.msg)
	}
}

func TestRequestedAndLacking(t *testing.T) {
	m := NewMatcher([]string{"nvidia.com/gpu", "nvidia.com/mig-*", "aws.amazon.com/neuron*"})
	p := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"aws.amazon.com/neuroncore": resource.MustParse("2")}}}},
		Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
			"nvidia.com/mig-1g.10gb": resource.MustParse("1"), "cpu": resource.MustParse("4"), "nvidia.com/gpu.shared": resource.MustParse("1")}}}},
		ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu"}},
	}}
	req := m.Requested(p)
	assert.Equal(t, []string{"aws.amazon.com/neuroncore", "dra:gpu", "nvidia.com/mig-1g.10gb"}, req, "cpu and unlisted resources are not accelerators")
	assert.Equal(t, []string{"nvidia.com/mig-1g.10gb"}, m.Lacking(req, "0/4 nodes are available: 2 Insufficient nvidia.com/mig-1g.10gb, 2 Insufficient cpu."))
	assert.Equal(t, req, m.Lacking(req, "0/4 nodes are available: 4 node(s) had untolerated taint {nvidia.com/gpu: present}."),
		"a message that names no accelerator: all of the pod's")
	assert.Equal(t, req, m.Lacking(req, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."), "a resource the pod does not request is not what it lacks")
}

func TestPlacementOf(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "node.kubernetes.io/instance-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"g6e.12xlarge"}},
			{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2a", "us-west-2b"}},
		}}}}}}}}
	assert.Equal(t, Placement{InstanceType: "g6e.12xlarge", Zone: Any}, PlacementOf(p), "two zones are no one zone")
	p.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": "us-west-2c"}
	assert.Equal(t, Placement{InstanceType: "g6e.12xlarge", Zone: "us-west-2c"}, PlacementOf(p))
}
