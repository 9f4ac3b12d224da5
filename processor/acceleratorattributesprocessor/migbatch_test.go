package acceleratorattributesprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
)

func TestMIGSharesOfOneGPUFitTheGPU(t *testing.T) {
	h := newHarness(t)
	h.cfg.KubernetesAPI.Enabled = false
	h.kubelet.SetPods(prt.Pod("ml", "nb", prt.Container("jupyter", prt.Devices("nvidia.com/mig-4g.40gb", migA))))
	h.start()

	md := pmetric.NewMetrics()
	// GPU 3: 3g.40gb (4/8 of the memory) + 4g.40gb (4/7 of the compute),
	// 15/14 of the GPU by their own shares. The 4g.40gb is reported by
	// NVML (MIG UUID, held) and by dcgm-exporter (<parent>/gi2): one instance.
	addDevice(md, migAttrs(gpu3+"/gi1", gpu3, 3, 1, "3g.40gb", 0.5))
	addDevice(md, migAttrs(gpu3+"/gi2", gpu3, 3, 2, "4g.40gb", 4.0/7))
	addDevice(md, migAttrs(migA, gpu3, 3, 2, "4g.40gb", 4.0/7))
	// GPU 2: two 3g.40gb fill it exactly: left alone.
	addDevice(md, migAttrs(gpu2+"/gi1", gpu2, 2, 1, "3g.40gb", 0.5))
	addDevice(md, migAttrs(gpu2+"/gi2", gpu2, 2, 2, "3g.40gb", 0.5))
	out := resourcesByID(h.process(md))

	share := func(id string) float64 {
		require.Len(t, out[id], 1, id)
		return resAttr(out[id][0], accelschema.AttrPartitionShare).(float64)
	}
	assert.InDelta(t, 0.5*14/15, share(gpu3+"/gi1"), 1e-12)
	assert.InDelta(t, 4.0/7*14/15, share(gpu3+"/gi2"), 1e-12)
	assert.InDelta(t, 4.0/7*14/15, share(migA), 1e-12, "the held instance keeps the fitted share")
	assert.Equal(t, "nb", resAttr(out[migA][0], accelschema.AttrK8sPodName))
	assert.InDelta(t, 1, share(gpu3+"/gi1")+share(gpu3+"/gi2"), 1e-12)
	assert.Equal(t, 0.5, share(gpu2+"/gi1"))
	assert.Equal(t, 0.5, share(gpu2+"/gi2"))
}

// dcgm-exporter (no NVML on the node) reports GPU 3's four MIG instances as
// <parent>/gi<N>, with the pod of each held one; PodResources lists the
// held ones by MIG UUID, which nothing here can place.
func TestUnheldDCGMExporterMIGSeriesByPigeonhole(t *testing.T) {
	series := func(gi int, pod string) []kv {
		attrs := migAttrs(gpu3+"/gi"+string(rune('0'+gi)), gpu3, 3, gi, "1g.10gb", 1.0/7)
		if pod != "" {
			attrs = append(attrs, kv{accelschema.AttrK8sPodName, pod}, kv{accelschema.AttrK8sNamespaceName, "ml"},
				kv{accelschema.AttrK8sContainerName, "c"})
		}
		return attrs
	}
	for _, tc := range []struct {
		name string
		// pods names the pod dcgm-exporter puts on gi1..gi4 ("" none).
		pods          [4]string
		kubeletAnswer bool
		extraPod      bool // a pod holding a whole GPU, named on a MIG series
		want          [4]any
	}{
		{
			name: "both held instances hinted: the other two are unallocated",
			pods: [4]string{"a", "b", "", ""}, kubeletAnswer: true,
			want: [4]any{"allocated", "allocated", "unallocated", "unallocated"},
		},
		{
			name: "a held instance without its hint: nothing is concluded",
			pods: [4]string{"a", "", "", ""}, kubeletAnswer: true,
			want: [4]any{"allocated", nil, nil, nil},
		},
		{
			name: "a hint naming a pod that holds no MIG device: nothing is concluded",
			pods: [4]string{"a", "b", "whole", ""}, kubeletAnswer: true, extraPod: true,
			want: [4]any{"allocated", "allocated", "allocated", nil},
		},
		{
			// The last answer still confirms the hints, but a miss proves
			// nothing while the kubelet is silent.
			name: "the kubelet does not answer: nothing is concluded",
			pods: [4]string{"a", "b", "", ""}, kubeletAnswer: false,
			want: [4]any{"allocated", "allocated", nil, nil},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.cfg.KubernetesAPI.Enabled = false
			pods := []*podresourcesv1.PodResources{
				prt.Pod("ml", "a", prt.Container("c", prt.Devices("nvidia.com/mig-1g.10gb", migA))),
				prt.Pod("ml", "b", prt.Container("c", prt.Devices("nvidia.com/mig-1g.10gb", migB))),
			}
			if tc.extraPod {
				pods = append(pods, prt.Pod("ml", "whole", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0))))
			}
			h.kubelet.SetPods(pods...)
			h.start()
			if !tc.kubeletAnswer {
				h.kubelet.Stop()
				h.p.refresh(t.Context())
			}
			md := pmetric.NewMetrics()
			for gi := 1; gi <= 4; gi++ {
				addDevice(md, series(gi, tc.pods[gi-1]))
			}
			out := h.process(md)
			for i := 0; i < 4; i++ {
				rm := out.ResourceMetrics().At(i)
				assert.Equal(t, tc.want[i], resAttr(rm, accelschema.AttrAllocationState), "gi%d", i+1)
				if tc.want[i] == "unallocated" {
					assert.Nil(t, resAttr(rm, accelschema.AttrK8sPodName), "gi%d", i+1)
					assert.Equal(t, nodeName, resAttr(rm, accelschema.AttrK8sNodeName), "gi%d", i+1)
				}
			}
		})
	}
}

// The demo's DRA node: GPU 0 in MIG mode with two 3g.71gb instances, both
// published in the node's ResourceSlice; a claim holds the first. No NVML,
// so nothing places MIG-db48… at gi1: dcgm-exporter names the claim (and
// its pod) on gi1's series and nothing on gi2's. gi1 is resolved through
// the claim hint, and that accounts for the one unplaced MIG device held on
// the node, so gi2 is unallocated.
func TestDRAClaimHintedMIGSeriesSettlesThePigeonhole(t *testing.T) {
	const (
		node   = "gpu-h200-a"
		parent = "GPU-a7fa7876-6e5f-4d87-b7d7-fffb2f75bb45"
		held   = "MIG-db48a1c2-0d3e-4f5a-8b6c-7d8e9f0a1b2c"
		free   = "MIG-fa5b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
		driver = "gpu.nvidia.com"
	)
	str := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &s} }
	migDevice := func(name, uuid string) resourcev1.Device {
		return resourcev1.Device{Name: name, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"type": str("mig"), "uuid": str(uuid), "parentUUID": str(parent), "profile": str("3g.71gb"),
		}}
	}
	nodeOf := node
	slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-gpu.nvidia.com"}, Spec: resourcev1.ResourceSliceSpec{
		Driver: driver, NodeName: &nodeOf, Pool: resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
		Devices: []resourcev1.Device{migDevice("gpu-0-mig-3g71gb-9-0", held), migDevice("gpu-0-mig-3g71gb-9-4", free)},
	}}
	pod := ownedPod("data-science", "notebook-carol", "uid-carol", "", "", map[string]string{"team": "research"})
	pod.Spec.NodeName = node
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "data-science", Name: "notebook-mig"}, Status: resourcev1.ResourceClaimStatus{
		Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: "mig", Driver: driver, Pool: node, Device: "gpu-0-mig-3g71gb-9-0"}}}},
		ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: pod.Name, UID: pod.UID}}}}
	h := newHarness(t, slice, pod, claim)
	h.cfg.NodeName = node
	h.kubelet.SetPods(prt.Pod("data-science", "notebook-carol", prt.Container("jupyter")))
	h.start()

	series := func(gi int) []kv {
		attrs := migAttrs(parent+"/gi"+string(rune('0'+gi)), parent, 0, gi, "3g.71gb", 0.5)
		for i := range attrs {
			if attrs[i].k == accelschema.AttrHostName {
				attrs[i].v = node
			}
		}
		return attrs
	}
	gi1 := append(series(1),
		kv{accelschema.AttrK8sNamespaceName, "data-science"}, kv{accelschema.AttrK8sPodName, "notebook-carol"},
		kv{accelschema.AttrK8sContainerName, "jupyter"},
		kv{accelschema.AttrDRAClaimNamespace, "data-science"}, kv{accelschema.AttrDRAClaimName, "notebook-mig"},
		kv{accelschema.AttrDRADriver, driver}, kv{accelschema.AttrDRAPool, node}, kv{accelschema.AttrDRADevice, "gpu-0-mig-3g71gb-9-0"})
	md := pmetric.NewMetrics()
	addDevice(md, gi1)
	addDevice(md, series(2))
	byID := resourcesByID(h.process(md))

	require.Len(t, byID[parent+"/gi1"], 1)
	held1 := byID[parent+"/gi1"][0]
	assert.Equal(t, accelschema.AllocationAllocated, resAttr(held1, accelschema.AttrAllocationState))
	assert.Equal(t, "notebook-carol", resAttr(held1, accelschema.AttrK8sPodName))
	assert.Equal(t, "research", resAttr(held1, accelschema.AttrTeam))

	require.Len(t, byID[parent+"/gi2"], 1)
	free2 := byID[parent+"/gi2"][0]
	assert.Equal(t, accelschema.AllocationUnallocated, resAttr(free2, accelschema.AttrAllocationState),
		"the claim accounts for the node's one unplaced MIG device: gi2 is held by nobody")
	assert.Nil(t, resAttr(free2, accelschema.AttrK8sPodName))
	assert.Equal(t, node, resAttr(free2, accelschema.AttrK8sNodeName))
}
