package acceleratorattributesprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
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
