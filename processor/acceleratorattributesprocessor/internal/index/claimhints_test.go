package index

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/kube"
)

// Without ResourceSlices nothing says which GPU a claim's result is, but a
// device that names its claim can still be given the claim's pods.
func TestClaimHoldersWithoutSlices(t *testing.T) {
	node := "n1"
	onNode := func(name, uid string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", UID: types.UID("u-" + uid)}, Spec: corev1.PodSpec{NodeName: node}}
	}
	result := func(device string) resourcev1.DeviceRequestAllocationResult {
		return resourcev1.DeviceRequestAllocationResult{Request: "gpu", Driver: "gpu.nvidia.com", Pool: node, Device: device}
	}
	claim := func(name string, results []resourcev1.DeviceRequestAllocationResult, pods ...string) *resourcev1.ResourceClaim {
		c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml"}, Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: results}}}}
		for _, p := range pods {
			c.Status.ReservedFor = append(c.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: p, UID: types.UID("u-" + p)})
		}
		return c
	}
	snap := &kube.Snapshot{DRA: true,
		Pods: []*corev1.Pod{onNode("a", "a"), onNode("b", "b")},
		Claims: []*resourcev1.ResourceClaim{
			claim("shared", []resourcev1.DeviceRequestAllocationResult{result("gpu-0")}, "a", "b"),
			claim("two-gpus", []resourcev1.DeviceRequestAllocationResult{result("gpu-1"), result("gpu-2")}, "a"),
			claim("elsewhere", []resourcev1.DeviceRequestAllocationResult{result("gpu-3")}, "not-here"),
		}}
	ix := Build(Input{Kube: snap, PodResources: []podresources.Pod{pod("ml", "a"), pod("ml", "b")}, PodResourcesOK: true})

	e, ok := ix.ClaimHolders("ml", "shared", "gpu.nvidia.com/n1/gpu-0")
	require.True(t, ok)
	require.Len(t, e.Copies, 2)
	assert.False(t, e.InPlace)
	for i, name := range []string{"a", "b"} {
		c := e.Copies[i]
		assert.Equal(t, name, attr(c.Consumer.Attrs, accelschema.AttrK8sPodName))
		assert.InDelta(t, 0.5, c.Share, 1e-12, "the claim's pods split the device")
		assert.Equal(t, accelschema.PartitionDRA, c.PartitionType)
		assert.Equal(t, "gpu.nvidia.com/n1/gpu-0", c.PartitionID)
		assert.Equal(t, "ml", attr(c.Extra, accelschema.AttrDRAClaimNamespace))
	}
	_, ok = ix.ClaimHolders("ml", "shared", "")
	assert.True(t, ok, "a claim with one result is found without the device")

	e, ok = ix.ClaimHolders("ml", "two-gpus", "gpu.nvidia.com/n1/gpu-2")
	require.True(t, ok)
	assert.True(t, e.InPlace)
	_, ok = ix.ClaimHolders("ml", "two-gpus", "")
	assert.False(t, ok, "with two results, a hint must say which device")
	_, ok = ix.ClaimHolders("ml", "two-gpus", "gpu.nvidia.com/n1/gpu-9")
	assert.False(t, ok, "a result the claim does not have")
	_, ok = ix.ClaimHolders("ml", "elsewhere", "")
	assert.False(t, ok, "no pod of the claim runs here")
}

func TestPlaceholderPodsAreMarked(t *testing.T) {
	ix := Build(Input{PodResourcesOK: true, Authoritative: true, PlaceholderNamespaces: []string{"runai-reservation"},
		PodResources: []podresources.Pod{
			pod("runai-reservation", "runai-reservation-gpu-n1-x7k2p", ctr("c", "nvidia.com/gpu", gpu0)),
			pod("ml", "train", ctr("c", "nvidia.com/gpu", gpu1)),
		}})
	reserved := held(t, ix, nvidiaGPU(gpu0)).Copies[0].Consumer
	assert.True(t, reserved.Placeholder)
	assert.False(t, held(t, ix, nvidiaGPU(gpu1)).Copies[0].Consumer.Placeholder)
	p, ok := ix.PodByName("runai-reservation", "runai-reservation-gpu-n1-x7k2p")
	require.True(t, ok)
	assert.True(t, p.Placeholder)
}

func TestConsumerIsPod(t *testing.T) {
	c := &Consumer{ID: "k8s/ml/train-0/main"}
	assert.True(t, c.IsPod("ml", "train-0"))
	assert.False(t, c.IsPod("ml", "train"), "a prefix of the pod's name is another pod")
	assert.False(t, c.IsPod("m", "l/train-0"))
	assert.False(t, (&Consumer{ID: "ecs/abc"}).IsPod("ml", "train-0"))
	assert.True(t, (&Consumer{ID: "k8s/ml/train-0/"}).IsPod("ml", "train-0"), "the pod as a whole")
}
