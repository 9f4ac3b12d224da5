package index

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/ecs"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/kube"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/nvmlmig"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/static"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/workload"
)

const (
	gpu0 = "GPU-00000000-0000-0000-0000-000000000000"
	gpu1 = "GPU-11111111-1111-1111-1111-111111111111"
	gpu2 = "GPU-22222222-2222-2222-2222-222222222222"
	mig1 = "MIG-aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
	mig2 = "MIG-bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"
)

func pod(ns, name string, containers ...podresources.Container) podresources.Pod {
	return podresources.Pod{Namespace: ns, Name: name, Containers: containers}
}

func ctr(name, resource string, ids ...string) podresources.Container {
	return podresources.Container{Name: name, Devices: []podresources.Devices{{ResourceName: resource, IDs: ids}}}
}

func nvidiaGPU(hwID string) Identity {
	return Identity{HWID: hwID, Kind: accelschema.KindNvidiaGPU, GI: -1, DeviceIndex: -1, CoreIndex: -1}
}

func attr(kvs []KV, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Str
		}
	}
	return ""
}

func held(t *testing.T, ix *Index, id Identity) *Entry {
	t.Helper()
	e, out := ix.Lookup(id)
	require.Equal(t, Held, out, "lookup %+v", id)
	return e
}

func TestWholeGPUExclusiveAndUnallocated(t *testing.T) {
	ix := Build(Input{
		NodeName:       "n1",
		PodResources:   []podresources.Pod{pod("ml", "train-0", ctr("main", "nvidia.com/gpu", gpu0))},
		PodResourcesOK: true, Authoritative: true,
	})
	e := held(t, ix, nvidiaGPU(gpu0))
	assert.True(t, e.InPlace)
	require.Len(t, e.Copies, 1)
	assert.Equal(t, 1.0, e.Copies[0].Share)
	assert.Equal(t, "", e.Copies[0].PartitionType, "whole GPU keeps the receiver's partition type (none)")
	c := e.Copies[0].Consumer
	assert.Equal(t, "train-0", attr(c.Attrs, accelschema.AttrK8sPodName))
	assert.Equal(t, "ml", attr(c.Attrs, accelschema.AttrK8sNamespaceName))
	assert.Equal(t, "main", attr(c.Attrs, accelschema.AttrK8sContainerName))
	assert.Equal(t, "unknown", attr(c.Attrs, accelschema.AttrWorkloadType))
	assert.Equal(t, "n1", attr(ix.NodeAttrs, accelschema.AttrK8sNodeName))

	_, out := ix.Lookup(nvidiaGPU(gpu1))
	assert.Equal(t, Unallocated, out)

	// Without complete sources a miss proves nothing.
	ix = Build(Input{PodResources: nil, PodResourcesOK: false, Authoritative: false})
	_, out = ix.Lookup(nvidiaGPU(gpu1))
	assert.Equal(t, Unknown, out)
}

func TestTimeSlicingReplicasFromLabelAllocatableOrSeen(t *testing.T) {
	pods := []podresources.Pod{
		pod("a", "p1", ctr("c", "nvidia.com/gpu", gpu0+"::0")),
		pod("b", "p2", ctr("c", "nvidia.com/gpu", gpu0+"::3", gpu0+"::1")),
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{
		"nvidia.com/gpu.replicas": "8", "nvidia.com/gpu.sharing-strategy": "time-slicing",
	}}}

	// From the GFD label: 8 replicas.
	ix := Build(Input{PodResources: pods, PodResourcesOK: true, Authoritative: true, Kube: &kube.Snapshot{Node: node}})
	e := held(t, ix, nvidiaGPU(gpu0))
	require.Len(t, e.Copies, 3)
	assert.False(t, e.InPlace)
	assert.Equal(t, "p1", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
	assert.InDelta(t, 1.0/8, e.Copies[0].Share, 1e-12)
	assert.Equal(t, accelschema.PartitionTimeSlicing, e.Copies[0].PartitionType)
	assert.Equal(t, gpu0+"::0", e.Copies[0].PartitionID)
	assert.InDelta(t, 2.0/8, e.Copies[1].Share, 1e-12)
	assert.Equal(t, gpu0+"::1,"+gpu0+"::3", e.Copies[1].PartitionID)
	assert.Nil(t, e.Copies[2].Consumer, "remainder")
	assert.InDelta(t, 5.0/8, e.Copies[2].Share, 1e-12)
	assert.Equal(t, accelschema.PartitionTimeSlicing, e.Copies[2].PartitionType)

	// From GetAllocatableResources: every replica id of the GPU.
	alloc := []podresources.Devices{{ResourceName: "nvidia.com/gpu", IDs: []string{gpu0 + "::0", gpu0 + "::1", gpu0 + "::2", gpu0 + "::3"}}}
	ix = Build(Input{PodResources: pods, PodResourcesOK: true, Allocatable: alloc, Authoritative: true})
	e = held(t, ix, nvidiaGPU(gpu0))
	assert.InDelta(t, 1.0/4, e.Copies[0].Share, 1e-12)
	assert.InDelta(t, 1.0/4, e.Copies[2].Share, 1e-12)

	// From the ids seen: the highest replica number is 3, so at least 4.
	ix = Build(Input{PodResources: pods, PodResourcesOK: true, Authoritative: true})
	e = held(t, ix, nvidiaGPU(gpu0))
	assert.InDelta(t, 1.0/4, e.Copies[0].Share, 1e-12)
}

func TestMPSShares(t *testing.T) {
	pods := []podresources.Pod{
		pod("a", "p1", ctr("c", "nvidia.com/gpu", gpu0+"::0")),
		pod("b", "p2", ctr("c", "nvidia.com/gpu", gpu0+"::1")),
	}
	labels := map[string]string{"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "mps"}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}}
	ix := Build(Input{PodResources: pods, PodResourcesOK: true, Authoritative: true, Kube: &kube.Snapshot{Node: node}})
	e := held(t, ix, nvidiaGPU(gpu0))
	assert.Equal(t, accelschema.PartitionMPS, e.Copies[0].PartitionType)
	assert.InDelta(t, 0.25, e.Copies[0].Share, 1e-12)
	assert.InDelta(t, 0.5, e.Copies[2].Share, 1e-12)

	// The MPS daemon says each client gets 20 % of the threads; no labels.
	topo := NewTopology()
	topo.Learn(Observation{Identity: nvidiaGPU(gpu0), MPSThreads: 0.2})
	ix = Build(Input{PodResources: pods, PodResourcesOK: true, Authoritative: true, Topology: topo})
	e = held(t, ix, nvidiaGPU(gpu0))
	assert.Equal(t, accelschema.PartitionMPS, e.Copies[0].PartitionType)
	assert.InDelta(t, 0.2, e.Copies[0].Share, 1e-12)
	assert.InDelta(t, 0.6, e.Copies[2].Share, 1e-12)

	// Overbooked percentages are scaled down to add up to the device.
	topo.Learn(Observation{Identity: nvidiaGPU(gpu0), MPSThreads: 0.8})
	ix = Build(Input{PodResources: pods, PodResourcesOK: true, Authoritative: true, Topology: topo})
	e = held(t, ix, nvidiaGPU(gpu0))
	require.Len(t, e.Copies, 2)
	assert.InDelta(t, 0.5, e.Copies[0].Share, 1e-12)
	assert.InDelta(t, 0.5, e.Copies[1].Share, 1e-12)
}

type fakeMIG map[string]nvmlmig.Position

func (f fakeMIG) MIGPosition(u string) (nvmlmig.Position, bool) { p, ok := f[u]; return p, ok }

func TestMIGByUUIDPositionAndLegacy(t *testing.T) {
	pods := []podresources.Pod{
		pod("a", "p1", ctr("c", "nvidia.com/mig-1g.10gb", mig1)),
		pod("b", "p2", ctr("c", "nvidia.com/mig-3g.40gb", mig2)),
	}
	// NVML-source resources teach MIG1's position; NVML (fake) knows MIG2's.
	topo := NewTopology()
	topo.Learn(Observation{Identity: Identity{HWID: mig1, Parent: gpu0, GI: 7, Kind: accelschema.KindNvidiaGPU, DeviceIndex: 0, CoreIndex: -1}})
	ix := Build(Input{PodResources: pods, PodResourcesOK: true, Authoritative: true, Topology: topo,
		MIG: fakeMIG{mig2: {Parent: gpu1, GI: 2}}})

	// NVML source: hw.id is the MIG UUID.
	e := held(t, ix, Identity{HWID: mig1, Parent: gpu0, GI: 7, Kind: accelschema.KindNvidiaGPU, DeviceIndex: 0, CoreIndex: -1})
	assert.True(t, e.InPlace)
	assert.Equal(t, "p1", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
	// dcgm-exporter source: hw.id <parent>/gi<N>.
	e = held(t, ix, Identity{HWID: gpu0 + "/gi7", Parent: gpu0, GI: 7, Kind: accelschema.KindNvidiaGPU, DeviceIndex: 0, CoreIndex: -1})
	assert.Equal(t, "p1", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
	e = held(t, ix, Identity{HWID: gpu1 + "/gi2", Parent: gpu1, GI: 2, Kind: accelschema.KindNvidiaGPU, DeviceIndex: 1, CoreIndex: -1})
	assert.Equal(t, "p2", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))

	// The MIG-enabled parent is allocated while an instance is held.
	e, out := ix.Lookup(nvidiaGPU(gpu0))
	assert.Equal(t, Derived, out)
	assert.Equal(t, accelschema.AllocationAllocated, e.State)
	// An instance nobody holds is unallocated.
	_, out = ix.Lookup(Identity{HWID: gpu0 + "/gi9", Parent: gpu0, GI: 9, Kind: accelschema.KindNvidiaGPU, DeviceIndex: 0, CoreIndex: -1})
	assert.Equal(t, Unallocated, out)

	// Legacy MIG-GPU-<uuid>/<gi>/<ci> ids name the position directly.
	ix = Build(Input{PodResources: []podresources.Pod{pod("a", "old", ctr("c", "nvidia.com/gpu", "MIG-"+gpu2+"/3/0"))}, PodResourcesOK: true, Authoritative: true})
	e = held(t, ix, Identity{HWID: gpu2 + "/gi3", Parent: gpu2, GI: 3, Kind: accelschema.KindNvidiaGPU, DeviceIndex: 2, CoreIndex: -1})
	assert.Equal(t, "old", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
}

func TestUnresolvableMIGIsUnknownNotUnallocated(t *testing.T) {
	// The kubelet names a MIG UUID nobody can place (no NVML, no NVML-source
	// resources): a dcgm-exporter MIG resource might be it.
	ix := Build(Input{PodResources: []podresources.Pod{pod("a", "p", ctr("c", "nvidia.com/mig-1g.10gb", mig1))}, PodResourcesOK: true, Authoritative: true})
	_, out := ix.Lookup(Identity{HWID: gpu0 + "/gi7", Parent: gpu0, GI: 7, Kind: accelschema.KindNvidiaGPU, DeviceIndex: 0, CoreIndex: -1})
	assert.Equal(t, Unknown, out)
	// A whole GPU is still provably unallocated.
	_, out = ix.Lookup(nvidiaGPU(gpu1))
	assert.Equal(t, Unallocated, out)
}

func TestGKEIds(t *testing.T) {
	pods := []podresources.Pod{
		pod("a", "whole", ctr("c", "nvidia.com/gpu", "nvidia0")),
		pod("a", "mig", ctr("c", "nvidia.com/gpu", "nvidia1/gi2")),
		pod("a", "shared-1", ctr("c", "nvidia.com/gpu", "nvidia2/vgpu0")),
		pod("a", "shared-2", ctr("c", "nvidia.com/gpu", "nvidia2/vgpu1")),
		pod("a", "by-index", ctr("c", "nvidia.com/gpu", "5")), // deviceIDStrategy: index
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"cloud.google.com/gke-max-shared-clients-per-gpu": "4"}}}
	ix := Build(Input{PodResources: pods, PodResourcesOK: true, Authoritative: true, Kube: &kube.Snapshot{Node: node}})
	id := nvidiaGPU(gpu0)
	id.DeviceIndex = 0
	assert.Equal(t, "whole", attr(held(t, ix, id).Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
	e := held(t, ix, Identity{HWID: gpu1 + "/gi2", Parent: gpu1, GI: 2, DeviceIndex: 1, Kind: accelschema.KindNvidiaGPU, CoreIndex: -1})
	assert.Equal(t, "mig", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
	id = nvidiaGPU(gpu2)
	id.DeviceIndex = 2
	e = held(t, ix, id)
	require.Len(t, e.Copies, 3)
	assert.InDelta(t, 0.25, e.Copies[0].Share, 1e-12)
	assert.Equal(t, "nvidia2/vgpu0", e.Copies[0].PartitionID)
	id = nvidiaGPU(gpu1)
	id.DeviceIndex = 5
	assert.Equal(t, "by-index", attr(held(t, ix, id).Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
}

func TestNeuronCoresAndDevices(t *testing.T) {
	topo := NewTopology()
	for dev := 0; dev < 2; dev++ {
		for c := 0; c < 4; c++ {
			topo.Learn(Observation{Identity: Identity{Kind: accelschema.KindAWSNeuron, DeviceIndex: dev, CoreIndex: dev*4 + c, GI: -1}})
		}
	}
	pods := []podresources.Pod{
		pod("a", "whole", ctr("c", "aws.amazon.com/neuron", "1")),
		pod("a", "cores-a", ctr("c", "aws.amazon.com/neuroncore", "0", "1")),
		pod("a", "cores-b", ctr("c", "aws.amazon.com/neuroncore", "2")),
	}
	ix := Build(Input{PodResources: pods, PodResourcesOK: true, Authoritative: true, Topology: topo})
	core := func(dev, g int) Identity {
		return Identity{HWID: "x", Kind: accelschema.KindAWSNeuron, DeviceIndex: dev, CoreIndex: g, GI: -1}
	}
	device := func(dev int) Identity {
		return Identity{HWID: "neuron_device_x", Kind: accelschema.KindAWSNeuron, DeviceIndex: dev, CoreIndex: -1, GI: -1}
	}
	// Device 1 held whole: it and its cores are the pod's.
	assert.True(t, held(t, ix, device(1)).InPlace)
	assert.Equal(t, "whole", attr(held(t, ix, core(1, 6)).Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
	// Device 0's cores are split (cores-a 2, cores-b 1, one free): the cores
	// carry the holders, the device is allocated and not copied per holder.
	e, out := ix.Lookup(device(0))
	require.Equal(t, Derived, out)
	assert.Empty(t, e.Copies)
	assert.Equal(t, accelschema.AllocationAllocated, e.State)
	// Each core is its pod's, in place; core 3 is nobody's.
	assert.True(t, held(t, ix, core(0, 2)).InPlace)
	_, out = ix.Lookup(core(0, 3))
	assert.Equal(t, Unallocated, out)
}

func TestDRA(t *testing.T) {
	node := "n1"
	strp := func(s string) *string { return &s }
	uid := func(s string) *types.UID { u := types.UID(s); return &u }
	p1 := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", Namespace: "ml", UID: "u1"}, Spec: corev1.PodSpec{NodeName: node,
		ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: strp("shared")}},
		Containers:     []corev1.Container{{Name: "a", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}, {Name: "sidecar"}}}}
	p2 := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p2", Namespace: "ml", UID: "u2"}, Spec: corev1.PodSpec{NodeName: node}}
	p3 := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p3", Namespace: "ml", UID: "u3"}, Spec: corev1.PodSpec{NodeName: node}}
	slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourcev1.ResourceSliceSpec{
		Driver: "gpu.nvidia.com", Pool: resourcev1.ResourcePool{Name: node}, NodeName: &node,
		Devices: []resourcev1.Device{
			{Name: "gpu-0", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"type": {StringValue: strp("gpu")}, "uuid": {StringValue: strp(gpu0)}},
				Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}}},
			{Name: "gpu-1-mig-1g10gb-19-0", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"type": {StringValue: strp("mig")}, "uuid": {StringValue: strp(mig1)}, "parentUUID": {StringValue: strp(gpu1)}, "profile": {StringValue: strp("1g.10gb")}}},
			{Name: "gpu-2", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"gpu.nvidia.com/uuid": {StringValue: strp(gpu2)}},
				Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}}},
		}}}
	yes := true
	claims := []*resourcev1.ResourceClaim{
		// Shared by p1 and p2: split in two.
		{ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "ml"}, Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
				{Request: "gpu", Driver: "gpu.nvidia.com", Pool: node, Device: "gpu-0"}}}},
			ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p1", UID: "u1"}, {Resource: "pods", Name: "p2", UID: "u2"}}}},
		// A MIG device through DRA, and a monitoring claim with admin access that holds nothing.
		{ObjectMeta: metav1.ObjectMeta{Name: "mig", Namespace: "ml"}, Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
				{Request: "mig", Driver: "gpu.nvidia.com", Pool: node, Device: "gpu-1-mig-1g10gb-19-0"},
				{Request: "mon", Driver: "gpu.nvidia.com", Pool: node, Device: "gpu-2", AdminAccess: &yes}}}},
			ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p3", UID: "u3"}}}},
		// Consumable capacity: p3 holds 20Gi of gpu-2's 80Gi.
		{ObjectMeta: metav1.ObjectMeta{Name: "slice-of-2", Namespace: "ml"}, Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
				{Request: "g", Driver: "gpu.nvidia.com", Pool: node, Device: "gpu-2", ShareID: uid("5f2c"),
					ConsumedCapacity: map[resourcev1.QualifiedName]resource.Quantity{"memory": resource.MustParse("20Gi")}}}}},
			ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p3", UID: "u3"}}}},
		// Reserved for a pod of another node: not ours.
		{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "ml"}, Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
				{Request: "g", Driver: "gpu.nvidia.com", Pool: "n2", Device: "gpu-0"}}}},
			ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "x", UID: "ux"}}}},
	}
	topo := NewTopology()
	topo.Learn(Observation{Identity: Identity{HWID: mig1, Parent: gpu1, GI: 5, Kind: accelschema.KindNvidiaGPU, DeviceIndex: 1, CoreIndex: -1}})
	ix := Build(Input{NodeName: node, PodResourcesOK: true, Authoritative: true, Topology: topo,
		PodResources: []podresources.Pod{pod("ml", "p1", podresources.Container{Name: "a"}), pod("ml", "p2"), pod("ml", "p3")},
		Kube:         &kube.Snapshot{Pods: []*corev1.Pod{p1, p2, p3}, Slices: []*resourcev1.ResourceSlice{slice}, Claims: claims, DRA: true}})

	e := held(t, ix, nvidiaGPU(gpu0))
	require.Len(t, e.Copies, 2)
	assert.Equal(t, "p1", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
	assert.Equal(t, "a", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sContainerName), "from the pod spec's claim references")
	assert.Equal(t, "u1", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodUID))
	assert.InDelta(t, 0.5, e.Copies[0].Share, 1e-12)
	assert.Equal(t, accelschema.PartitionDRA, e.Copies[0].PartitionType)
	assert.Equal(t, "gpu.nvidia.com/n1/gpu-0", e.Copies[0].PartitionID)
	assert.Equal(t, "shared", attr(e.Copies[0].Extra, accelschema.AttrDRAClaimName))
	assert.Equal(t, "", attr(e.Copies[1].Consumer.Attrs, accelschema.AttrK8sContainerName))

	e = held(t, ix, Identity{HWID: gpu1 + "/gi5", Parent: gpu1, GI: 5, Kind: accelschema.KindNvidiaGPU, DeviceIndex: 1, CoreIndex: -1})
	assert.True(t, e.InPlace)
	assert.Equal(t, "1g.10gb", attr(e.Copies[0].Extra, accelschema.AttrPartitionProfile))

	e = held(t, ix, nvidiaGPU(gpu2))
	require.Len(t, e.Copies, 2, "the admin-access claim holds nothing")
	assert.InDelta(t, 0.25, e.Copies[0].Share, 1e-12)
	assert.Equal(t, "5f2c", attr(e.Copies[0].Extra, accelschema.AttrDRAShareID))
	assert.Equal(t, "gpu.nvidia.com/n1/gpu-2/5f2c", e.Copies[0].PartitionID)
	assert.InDelta(t, 0.75, e.Copies[1].Share, 1e-12)

	// Without the API (no slices), the kubelet's DRA devices cannot be placed:
	// an unheld-looking GPU might be one of them.
	withClaims := pod("ml", "p1", podresources.Container{Name: "a", Claims: []podresources.Claim{{Name: "shared", Namespace: "ml",
		Devices: []podresources.ClaimDevice{{Driver: "gpu.nvidia.com", Pool: node, Device: "gpu-0"}}}}})
	ix = Build(Input{PodResources: []podresources.Pod{withClaims}, PodResourcesOK: true, Authoritative: true})
	_, out := ix.Lookup(nvidiaGPU(gpu0))
	assert.Equal(t, Unknown, out)
}

func TestTeamWorkloadFromAPI(t *testing.T) {
	yes := true
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "vllm-7d9f-x", Namespace: "serve", UID: "u9",
		Labels:          map[string]string{"team": "search", "pod-template-hash": "7d9f", "app": "vllm"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "vllm-7d9f", Controller: &yes}}}}
	wl := workload.Config{TeamLabels: []string{"team"}, PodLabels: []string{"app"}, InferWorkloadType: true}
	ix := Build(Input{PodResourcesOK: true, Authoritative: true, Workload: wl,
		PodResources:  []podresources.Pod{pod("serve", "vllm-7d9f-x", ctr("vllm", "nvidia.com/gpu", gpu0))},
		Kube:          &kube.Snapshot{Pods: []*corev1.Pod{p}},
		InferencePods: map[string]bool{"u9": true}})
	c := held(t, ix, nvidiaGPU(gpu0)).Copies[0].Consumer
	assert.Equal(t, "search", attr(c.Attrs, accelschema.AttrTeam))
	assert.Equal(t, "vllm", attr(c.Attrs, accelschema.AttrWorkloadName))
	assert.Equal(t, "vllm", attr(c.Attrs, accelschema.AttrK8sDeploymentName))
	assert.Equal(t, "vllm-7d9f", attr(c.Attrs, accelschema.AttrK8sReplicaSetName))
	assert.Equal(t, "inference", attr(c.Attrs, accelschema.AttrWorkloadType), "the pod serves gen_ai metrics")
	assert.Equal(t, "vllm", attr(c.Attrs, accelschema.K8sPodLabelPrefix+"app"))
	assert.Equal(t, "u9", c.PodUID)

	assert.Empty(t, ix.InvalidWorkloadTypes)
	p.Labels["otelcol-accel.io/workload-type"] = "serving"
	wl.WorkloadTypeLabels = []string{"otelcol-accel.io/workload-type"}
	ix2 := Build(Input{PodResourcesOK: true, Workload: wl, Kube: &kube.Snapshot{Pods: []*corev1.Pod{p}}})
	assert.Equal(t, map[string]string{"serve/vllm-7d9f-x": "serving"}, ix2.InvalidWorkloadTypes)

	pp, ok := ix.PodByUID("u9")
	require.True(t, ok)
	assert.Equal(t, "search", attr(pp.Attrs, accelschema.AttrTeam))
	on, known := ix.PodOnNode("serve", "vllm-7d9f-x")
	assert.True(t, known)
	assert.True(t, on)
	on, _ = ix.PodOnNode("serve", "gone")
	assert.False(t, on)
}

func TestECSAndStaticSources(t *testing.T) {
	containers := []ecs.Container{
		{ID: "aaaaaaaaaaaaaaaa", Name: "vllm", TaskARN: "arn:task/1", Cluster: "arn:cluster/c", TaskFamily: "llm", Devices: []string{gpu0}, MPSActiveThreads: 0.5, Labels: map[string]string{"team": "search"}},
		{ID: "bbbbbbbbbbbbbbbb", Name: "embed", TaskARN: "arn:task/2", TaskFamily: "embed", Devices: []string{gpu0}, MPSActiveThreads: 0.25},
		{ID: "cccccccccccccccc", Name: "train", TaskARN: "arn:task/3", TaskFamily: "train", Devices: []string{"2"}},
	}
	wl := workload.Config{TeamLabels: []string{"team"}}
	ix := Build(Input{ECS: containers, ECSOK: true, Authoritative: true, Workload: wl})
	e := held(t, ix, nvidiaGPU(gpu0))
	require.Len(t, e.Copies, 3)
	assert.Equal(t, accelschema.PartitionMPS, e.Copies[0].PartitionType)
	assert.Equal(t, "aaaaaaaaaaaa", e.Copies[0].PartitionID)
	assert.InDelta(t, 0.5, e.Copies[0].Share, 1e-12)
	assert.InDelta(t, 0.25, e.Copies[1].Share, 1e-12)
	assert.InDelta(t, 0.25, e.Copies[2].Share, 1e-12)
	c := e.Copies[0].Consumer
	assert.Equal(t, "arn:task/1", attr(c.Attrs, accelschema.AttrECSTaskARN))
	assert.Equal(t, "arn:cluster/c", attr(c.Attrs, accelschema.AttrECSClusterARN))
	assert.Equal(t, "llm", attr(c.Attrs, accelschema.AttrECSTaskFamily))
	assert.Equal(t, "vllm", attr(c.Attrs, accelschema.AttrContainerName))
	assert.Equal(t, "llm", attr(c.Attrs, accelschema.AttrWorkloadName))
	assert.Equal(t, "search", attr(c.Attrs, accelschema.AttrTeam))
	assert.Equal(t, []string{"aaaaaaaaaaaaaaaa"}, c.ContainerIDs)
	id := nvidiaGPU(gpu2)
	id.DeviceIndex = 2
	assert.True(t, held(t, ix, id).InPlace, "NVIDIA_VISIBLE_DEVICES by index")

	rows := []static.Row{
		{Line: 3, Device: gpu1, JobID: "81234", Team: "research", WorkloadName: "pretrain", WorkloadType: "training"},
		{Line: 4, Device: gpu2, JobID: "1", Team: "x", Share: 0.5},
		{Line: 5, Device: gpu2, JobID: "2", Team: "y", Host: "other-host"},
		{Line: 6, Device: "0", JobID: "3", Team: "z"},
	}
	ix = Build(Input{Static: rows, Authoritative: true, HostNames: []string{"gpu-a-17"}})
	c = held(t, ix, nvidiaGPU(gpu1)).Copies[0].Consumer
	assert.Equal(t, "81234", attr(c.Attrs, accelschema.AttrJobID))
	assert.Equal(t, "training", attr(c.Attrs, accelschema.AttrWorkloadType))
	e = held(t, ix, nvidiaGPU(gpu2))
	require.Len(t, e.Copies, 2, "the other host's row is ignored")
	assert.InDelta(t, 0.5, e.Copies[0].Share, 1e-12)
	id = nvidiaGPU(gpu0)
	id.DeviceIndex = 0
	assert.Equal(t, "3", attr(held(t, ix, id).Copies[0].Consumer.Attrs, accelschema.AttrJobID))

	// Kubernetes wins over the mapping file for the same device.
	ix = Build(Input{Static: rows[:1], PodResourcesOK: true, Authoritative: true,
		PodResources: []podresources.Pod{pod("ml", "p", ctr("c", "nvidia.com/gpu", gpu1))}})
	e = held(t, ix, nvidiaGPU(gpu1))
	require.Len(t, e.Copies, 1)
	assert.Equal(t, "p", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
}

func TestNodeAttributes(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{
		"node.kubernetes.io/instance-type": "p5.48xlarge", "topology.kubernetes.io/region": "us-east-1", "topology.kubernetes.io/zone": "us-east-1a"}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-0123456789abcdef0"}}
	ix := Build(Input{NodeName: "n", ClusterName: "prod", Kube: &kube.Snapshot{Node: node}})
	assert.Equal(t, []KV{
		Str(accelschema.AttrK8sNodeName, "n"), Str(accelschema.AttrK8sClusterName, "prod"),
		Str(accelschema.AttrHostType, "p5.48xlarge"), Str(accelschema.AttrCloudRegion, "us-east-1"), Str(accelschema.AttrCloudZone, "us-east-1a"),
		Str(accelschema.AttrCloudProvider, "aws"), Str(accelschema.AttrHostID, "i-0123456789abcdef0"),
	}, ix.NodeAttrs)
}
