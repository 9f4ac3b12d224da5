package index

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/kube"
)

// The fixtures in testdata are ResourceSliceLists as the API server returns
// them for the NVIDIA DRA driver (k8s-dra-driver-gpu):
//
//   - resourceslices_h100_mig.json, gpu-node-7: driver v25.3 attributes
//     (index, minor, pcieBusID), devices in map order (gpu-3 first), GPU
//     minor 2 in MIG mode, driverVersion as the semver 580.105.8 of NVML's
//     580.105.08, a compute-domain.nvidia.com slice, and the previous pool
//     generation still listed (its 1g.10gb instance had another UUID).
//   - resourceslices_vgpu.json, vgpu-node-1: two vGPUs (brand NvidiaVCS)
//     behind one PCI bus id, v25.12 attribute names.
//   - resourceslices_dynamic_mig.json, gpu-node-8: DynamicMIG (partitionable
//     devices, counters in their own slice): MIG devices without a uuid.
//   - resourceslices_broken.json, gpu-node-9: devices no driver should
//     publish, beside good ones.
const (
	h100GPU0 = "GPU-5d2c8f14-7a3e-4b9d-8c61-0e4f2a9b7d30" // gpu-0: minor 0, index 0
	h100GPU1 = "GPU-5d2c8f14-7a3e-4b9d-8c61-0e4f2a9b7d31" // gpu-1: minor 1, index 2
	h100GPU2 = "GPU-5d2c8f14-7a3e-4b9d-8c61-0e4f2a9b7d32" // minor 2, index 3, MIG mode
	h100GPU3 = "GPU-5d2c8f14-7a3e-4b9d-8c61-0e4f2a9b7d33" // gpu-3: minor 3, index 1
	h100MIG1 = "MIG-9b41e7c2-3f6a-5d8e-a2b4-6c1d0f3e8a01" // gpu-2-mig-1g10gb-19-0, generation 2
	h100MIG2 = "MIG-9b41e7c2-3f6a-5d8e-a2b4-6c1d0f3e8a02" // gpu-2-mig-3g40gb-9-4
	h100MIG0 = "MIG-9b41e7c2-3f6a-5d8e-a2b4-6c1d0f3e8a00" // gpu-2-mig-1g10gb-19-0, generation 1 (gone)

	vgpu0 = "GPU-e1a7c3b9-4d2f-11f0-9b6e-7c2a5d8e4f10"
	vgpu1 = "GPU-e1a7c3b9-4d2f-11f0-9b6e-7c2a5d8e4f11"

	dynGPU0 = "GPU-3c9e1b7a-8f2d-4a6c-b5e1-9d0f7a2c4e60"
	dynGPU1 = "GPU-3c9e1b7a-8f2d-4a6c-b5e1-9d0f7a2c4e61"

	brokenGPU = "GPU-7f1d3b5a-9c2e-4e6a-8b0d-2f4a6c8e0b1" // + the device's minor
)

// loadSlices decodes a fixture with the client-go scheme, as the informer
// does, refusing fields the API does not have.
func loadSlices(t *testing.T, file string) []*resourcev1.ResourceSlice {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	require.NoError(t, err)
	obj, _, err := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer().Decode(data, nil, nil)
	require.NoError(t, err)
	list, ok := obj.(*resourcev1.ResourceSliceList)
	require.True(t, ok, "%s is a %T", file, obj)
	out := make([]*resourcev1.ResourceSlice, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
}

// draNode is one node's API objects and kubelet view for a DRA build.
type draNode struct {
	name   string
	slices []*resourcev1.ResourceSlice
	pods   []*corev1.Pod
	claims []*resourcev1.ResourceClaim
	topo   *Topology
}

func (n *draNode) pod(ns, name string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)}, Spec: corev1.PodSpec{NodeName: n.name}}
	n.pods = append(n.pods, p)
	return p
}

// claim adds an allocated claim reserved for pod, with results on devices
// "driver/device" of this node's pools.
func (n *draNode) claim(pod *corev1.Pod, name string, devices ...string) {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: name}}
	c.Status.Allocation = &resourcev1.AllocationResult{}
	for _, d := range devices {
		driver, device, _ := strings.Cut(d, "/")
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results, resourcev1.DeviceRequestAllocationResult{
			Request: "r", Driver: driver, Pool: n.name, Device: device})
	}
	c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: pod.Name, UID: pod.UID}}
	n.claims = append(n.claims, c)
}

func (n *draNode) build() *Index {
	var pr []podresources.Pod
	for _, p := range n.pods {
		pr = append(pr, pod(p.Namespace, p.Name))
	}
	return Build(Input{NodeName: n.name, PodResources: pr, PodResourcesOK: true, Authoritative: true, Topology: n.topo,
		Kube: &kube.Snapshot{Pods: n.pods, Slices: n.slices, Claims: n.claims, DRA: true}})
}

// gpuAt is a whole GPU as a receiver reports it: UUID and NVML index.
func gpuAt(uuid string, index int) Identity {
	return Identity{HWID: uuid, Kind: accelschema.KindNvidiaGPU, GI: -1, DeviceIndex: index, CoreIndex: -1}
}

// migAt is a MIG device as the NVML source reports it.
func migAt(uuid, parent string, index, gi int) Identity {
	return Identity{HWID: uuid, Parent: parent, Kind: accelschema.KindNvidiaGPU, GI: gi, DeviceIndex: index, CoreIndex: -1}
}

func holderPod(t *testing.T, ix *Index, id Identity) string {
	t.Helper()
	e := held(t, ix, id)
	require.True(t, e.InPlace, "%s has one holder", id.HWID)
	return attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName)
}

// gpu-3 comes first in the slice and is NVML index 1; gpu-2 is index 3 and
// only its MIG devices are published. Neither the order nor the number in a
// device's name says which GPU it is; its uuid does.
func TestDRASliceDevicesMapByUUIDNotOrderOrName(t *testing.T) {
	n := &draNode{name: "gpu-node-7", slices: loadSlices(t, "resourceslices_h100_mig.json"), topo: NewTopology()}
	// The NVML source has reported the MIG devices with their positions.
	n.topo.Learn(Observation{Identity: migAt(h100MIG1, h100GPU2, 3, 13)})
	n.topo.Learn(Observation{Identity: migAt(h100MIG2, h100GPU2, 3, 2)})
	n.claim(n.pod("ml", "train-0"), "train", "gpu.nvidia.com/gpu-0")
	n.claim(n.pod("serve", "vllm-0"), "serve", "gpu.nvidia.com/gpu-3")
	n.claim(n.pod("ml", "notebook-0"), "nb", "gpu.nvidia.com/gpu-2-mig-1g10gb-19-0")
	ix := n.build()

	assert.Empty(t, ix.SliceProblems)
	assert.Equal(t, "train-0", holderPod(t, ix, gpuAt(h100GPU0, 0)))
	assert.Equal(t, "vllm-0", holderPod(t, ix, gpuAt(h100GPU3, 1)))
	e := held(t, ix, migAt(h100MIG1, h100GPU2, 3, 13))
	assert.Equal(t, "notebook-0", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
	assert.Equal(t, "1g.10gb", attr(e.Copies[0].Extra, accelschema.AttrPartitionProfile))
	assert.Equal(t, "gpu.nvidia.com/gpu-node-7/gpu-2-mig-1g10gb-19-0", e.Copies[0].PartitionID)
	// dcgm-exporter's id for the same instance finds the same holder.
	assert.Equal(t, "notebook-0", holderPod(t, ix, Identity{HWID: h100GPU2 + "/gi13", Parent: h100GPU2, Kind: accelschema.KindNvidiaGPU, GI: 13, DeviceIndex: 3, CoreIndex: -1}))

	for _, free := range []Identity{gpuAt(h100GPU1, 2), migAt(h100MIG2, h100GPU2, 3, 2)} {
		_, out := ix.Lookup(free)
		assert.Equal(t, Unallocated, out, free.HWID)
	}
	e, out := ix.Lookup(gpuAt(h100GPU2, 3))
	assert.Equal(t, Derived, out, "the MIG-mode GPU")
	assert.Equal(t, accelschema.AllocationAllocated, e.State)
}

// The slice of generation 1 still lists gpu-2-mig-1g10gb-19-0 with the UUID
// of the instance that was destroyed; generation 2 has the one that exists.
// Whatever order the informer lists them in, the newest generation wins and
// the old one is no conflict.
func TestDRASliceOlderPoolGenerationIgnored(t *testing.T) {
	all := loadSlices(t, "resourceslices_h100_mig.json")
	require.Equal(t, int64(1), all[2].Spec.Pool.Generation, "fixture: the stale slice is last")
	for _, order := range [][]*resourcev1.ResourceSlice{all, {all[2], all[1], all[0]}} {
		n := &draNode{name: "gpu-node-7", slices: order}
		n.claim(n.pod("ml", "notebook-0"), "nb", "gpu.nvidia.com/gpu-2-mig-1g10gb-19-0")
		ix := n.build()
		assert.Empty(t, ix.SliceProblems)
		assert.Equal(t, "notebook-0", holderPod(t, ix, migAt(h100MIG1, h100GPU2, 3, 13)))
		assert.False(t, ix.Known(migAt(h100MIG0, h100GPU2, 3, 7)), "the destroyed instance holds nothing")
	}
}

// Two vGPUs behind one PCI bus id are two devices: held by two pods, each
// whole.
func TestDRASliceVGPUsSharingAPCIBusID(t *testing.T) {
	n := &draNode{name: "vgpu-node-1", slices: loadSlices(t, "resourceslices_vgpu.json")}
	bus := func(uuid string) string {
		for _, d := range n.slices[0].Spec.Devices {
			if *d.Attributes["uuid"].StringValue == uuid {
				return *d.Attributes["resource.kubernetes.io/pciBusID"].StringValue
			}
		}
		return ""
	}
	require.Equal(t, bus(vgpu0), bus(vgpu1), "fixture: one PCI bus id")
	n.claim(n.pod("team-a", "job-a"), "a", "gpu.nvidia.com/gpu-0")
	n.claim(n.pod("team-b", "job-b"), "b", "gpu.nvidia.com/gpu-1")
	ix := n.build()

	assert.Empty(t, ix.SliceProblems)
	assert.Equal(t, "job-a", holderPod(t, ix, gpuAt(vgpu0, 0)))
	assert.Equal(t, "job-b", holderPod(t, ix, gpuAt(vgpu1, 1)))
	assert.InDelta(t, 1.0, held(t, ix, gpuAt(vgpu1, 1)).Copies[0].Share, 1e-12)
	assert.Equal(t, "gpu.nvidia.com/vgpu-node-1/gpu-1", held(t, ix, gpuAt(vgpu1, 1)).Copies[0].PartitionID)
}

// A multi-node NVLink workload's claim holds a GPU and an IMEX channel; the
// compute-domain daemon's claim holds a daemon device. Neither compute-domain
// device is a GPU: no error, no entry, and no doubt about the other GPUs,
// whether or not the compute-domain slice has been seen.
func TestDRAComputeDomainDevicesAreNotGPUs(t *testing.T) {
	all := loadSlices(t, "resourceslices_h100_mig.json")
	require.Equal(t, "compute-domain.nvidia.com", all[1].Spec.Driver, "fixture")
	withoutChannels := []*resourcev1.ResourceSlice{all[0], all[2]}
	for name, published := range map[string][]*resourcev1.ResourceSlice{"published": all, "not seen yet": withoutChannels} {
		t.Run(name, func(t *testing.T) {
			n := &draNode{name: "gpu-node-7", slices: published}
			n.claim(n.pod("ml", "worker-0"), "imex", "gpu.nvidia.com/gpu-1", "compute-domain.nvidia.com/channel-0")
			n.claim(n.pod("nvidia-dra-driver-gpu", "cd-daemon-x7k2p"), "cd-daemon", "compute-domain.nvidia.com/daemon-0")
			ix := n.build()

			assert.Empty(t, ix.SliceProblems)
			e := held(t, ix, gpuAt(h100GPU1, 2))
			require.Len(t, e.Copies, 1)
			assert.True(t, e.InPlace)
			assert.Equal(t, "worker-0", attr(e.Copies[0].Consumer.Attrs, accelschema.AttrK8sPodName))
			assert.Equal(t, "gpu.nvidia.com/gpu-node-7/gpu-1", e.Copies[0].PartitionID)
			assert.Equal(t, 1, ix.Stats.Devices, "gpu-1; nothing for channel-0 or daemon-0")
			_, out := ix.Lookup(gpuAt(h100GPU0, 0))
			assert.Equal(t, Unallocated, out)
		})
	}

	// Without the DRA API, the kubelet's compute-domain devices hide no GPU
	// either; an unnamed gpu.nvidia.com device does.
	claimOn := func(driver, device string) []podresources.Pod {
		return []podresources.Pod{pod("ml", "worker-0", podresources.Container{Name: "w", Claims: []podresources.Claim{{Name: "imex", Namespace: "ml",
			Devices: []podresources.ClaimDevice{{Driver: driver, Pool: "gpu-node-7", Device: device}}}}})}
	}
	ix := Build(Input{PodResources: claimOn("compute-domain.nvidia.com", "channel-0"), PodResourcesOK: true, Authoritative: true})
	_, out := ix.Lookup(gpuAt(h100GPU0, 0))
	assert.Equal(t, Unallocated, out)
	ix = Build(Input{PodResources: claimOn("gpu.nvidia.com", "gpu-1"), PodResourcesOK: true, Authoritative: true})
	_, out = ix.Lookup(gpuAt(h100GPU0, 0))
	assert.Equal(t, Unknown, out)
}

// With DynamicMIG a MIG device is created when its claim is prepared; the
// slice names its parent and profile, never its UUID. A held one is a MIG
// device nobody can place: MIG series are not called unallocated, and the
// pigeonhole rule counts it with its pod.
func TestDRADynamicMIGHeldBeforeItHasAUUID(t *testing.T) {
	n := &draNode{name: "gpu-node-8", slices: loadSlices(t, "resourceslices_dynamic_mig.json")}
	require.Len(t, n.slices[0].Spec.SharedCounters, 2, "fixture: the counters slice")
	n.claim(n.pod("ml", "notebook-1"), "nb", "gpu.nvidia.com/gpu-0-mig-1g10gb-19-1")
	n.claim(n.pod("ml", "train-1"), "train", "gpu.nvidia.com/gpu-1")
	ix := n.build()

	assert.Empty(t, ix.SliceProblems, "a type mig device with parentUUID and no uuid is how DynamicMIG publishes")
	assert.Equal(t, "train-1", holderPod(t, ix, gpuAt(dynGPU1, 1)))
	assert.Equal(t, 1, ix.UnplacedMIG())
	assert.True(t, ix.HoldsUnplacedMIG("ml", "notebook-1"))
	assert.False(t, ix.HoldsUnplacedMIG("ml", "train-1"))
	nvmlSeries := migAt("MIG-0d1e2f3a-4b5c-5d6e-8f70-8192a3b4c5d6", dynGPU0, 0, 11)
	dcgmSeries := Identity{HWID: dynGPU0 + "/gi11", Parent: dynGPU0, Kind: accelschema.KindNvidiaGPU, GI: 11, DeviceIndex: 0, CoreIndex: -1}
	for _, id := range []Identity{nvmlSeries, dcgmSeries} {
		_, out := ix.Lookup(id)
		assert.Equal(t, Unknown, out, id.HWID)
	}
}

// Bad devices are reported with the slice, pool and device, and what is
// wrong; the good devices of the same slices are read as usual.
func TestDRABadSliceDevicesReportedRestKept(t *testing.T) {
	const s1, s2 = "gpu-node-9-gpu.nvidia.com-4hq8c", "gpu-node-9-gpu.nvidia.com-zz8mn"
	problem := func(slice, device, reason string) SliceProblem {
		return SliceProblem{Slice: slice, Driver: "gpu.nvidia.com", Pool: "gpu-node-9", Device: device, Reason: reason}
	}
	want := []SliceProblem{
		problem(s1, "gpu-1", "type gpu but no uuid attribute"),
		problem(s1, "gpu-2", `type gpu but uuid "7f1d3b5a-9c2e-4e6a-8b0d-2f4a6c8e0b12" does not start with "GPU-"`),
		problem(s1, "gpu-3", "attribute uuid is not a string"),
		problem(s1, "gpu-5-mig-1g10gb-19-0", "type mig with neither uuid nor parentUUID"),
		problem(s2, "gpu-4", `also published by ResourceSlice gpu-node-9-gpu.nvidia.com-4hq8c as a different device (uuid "`+brokenGPU+`9" here, "`+brokenGPU+`4" there); neither is used`),
	}
	all := loadSlices(t, "resourceslices_broken.json")

	// Problems alone change nothing for the good devices and the free ones.
	n := &draNode{name: "gpu-node-9", slices: all}
	n.claim(n.pod("ml", "a"), "a", "gpu.nvidia.com/gpu-0")
	n.claim(n.pod("ml", "c"), "c", "gpu.nvidia.com/gpu-6")
	ix := n.build()
	assert.Equal(t, want, ix.SliceProblems)
	assert.Equal(t, "a", holderPod(t, ix, gpuAt(brokenGPU+"0", 0)))
	assert.Equal(t, "c", holderPod(t, ix, gpuAt(brokenGPU+"6", 6)))
	_, out := ix.Lookup(gpuAt(brokenGPU+"7", 7))
	assert.Equal(t, Unallocated, out)

	// The informer's order does not change what is reported.
	rev := slices.Clone(all)
	slices.Reverse(rev)
	n.slices = rev
	assert.Equal(t, want, n.build().SliceProblems)

	// A claim on a bad device holds some GPU nobody can name: a GPU that
	// looks free may be it. gpu-4 is neither of the UUIDs it was given.
	n.claim(n.pod("ml", "b"), "b", "gpu.nvidia.com/gpu-1")
	n.claim(n.pod("ml", "d"), "d", "gpu.nvidia.com/gpu-4")
	ix = n.build()
	_, out = ix.Lookup(gpuAt(brokenGPU+"7", 7))
	assert.Equal(t, Unknown, out)
	for _, either := range []string{brokenGPU + "4", brokenGPU + "9"} {
		assert.False(t, ix.Known(gpuAt(either, -1)), either)
	}
	assert.Equal(t, "a", holderPod(t, ix, gpuAt(brokenGPU+"0", 0)))

	assert.Equal(t, "ResourceSlice gpu-node-9-gpu.nvidia.com-4hq8c (driver gpu.nvidia.com, pool gpu-node-9), device gpu-1: type gpu but no uuid attribute", want[0].String())
}
