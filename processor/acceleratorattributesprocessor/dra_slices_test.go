package acceleratorattributesprocessor

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap/zapcore"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
)

// sliceFixture decodes a ResourceSliceList fixture of the index package, as
// the API server would serve it, into objects for the fake API server.
func sliceFixture(t *testing.T, file string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("internal", "index", "testdata", file))
	require.NoError(t, err)
	obj, _, err := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer().Decode(data, nil, nil)
	require.NoError(t, err)
	list := obj.(*resourcev1.ResourceSliceList)
	out := make([]runtime.Object, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
}

// Slices that reach the processor through the informer with broken devices:
// one error line per bad device, naming the slice, the device and what is
// wrong, not one per refresh; the good devices of the same slices are
// attributed.
func TestDRABadResourceSliceDevicesLoggedRateLimited(t *testing.T) {
	const node = "gpu-node-9"
	const good, free = "GPU-7f1d3b5a-9c2e-4e6a-8b0d-2f4a6c8e0b10", "GPU-7f1d3b5a-9c2e-4e6a-8b0d-2f4a6c8e0b17"
	objs := sliceFixture(t, "resourceslices_broken.json")
	for _, c := range []struct{ pod, device string }{{"a", "gpu-0"}, {"b", "gpu-1"}} {
		p := ownedPod("ml", c.pod, "uid-"+c.pod, "", "", nil)
		p.Spec.NodeName = node
		objs = append(objs, p, &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: c.pod + "-gpu"}, Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
				{Request: "gpu", Driver: "gpu.nvidia.com", Pool: node, Device: c.device}}}},
			ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: c.pod, UID: p.UID}}}})
	}
	h := newHarness(t, objs...)
	h.cfg.NodeName = node
	h.kubelet.SetPods(prt.Pod("ml", "a", prt.Container("main")), prt.Pod("ml", "b", prt.Container("main")))
	h.start()

	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs(good, 0))
	addDevice(md, gpuAttrs(free, 7))
	byID := resourcesByID(h.process(md))
	assert.Equal(t, "a", resAttr(byID[good][0], accelschema.AttrK8sPodName))
	assert.NotEqual(t, accelschema.AllocationUnallocated, resAttr(byID[free][0], accelschema.AttrAllocationState),
		"b holds gpu-1, which has no uuid: the free-looking GPU may be it")

	const msg = "accelerator_attributes: ResourceSlice device cannot be tied to a GPU; claims on it stay unattributed"
	logged := h.logs.FilterMessage(msg).All()
	require.Len(t, logged, 5, "gpu-1, gpu-2, gpu-3, gpu-5-mig-1g10gb-19-0, gpu-4 twice published")
	fields := map[string]string{}
	for _, e := range logged {
		assert.Equal(t, zapcore.ErrorLevel, e.Level)
		if f := e.ContextMap(); f["device"] == "gpu-1" {
			for k, v := range f {
				fields[k], _ = v.(string)
			}
		}
	}
	assert.Equal(t, map[string]string{
		"resourceslice": "gpu-node-9-gpu.nvidia.com-4hq8c", "driver": "gpu.nvidia.com", "pool": node,
		"device": "gpu-1", "problem": "type gpu but no uuid attribute",
	}, fields)

	h.p.refresh(context.Background())
	assert.Len(t, h.logs.FilterMessage(msg).All(), 5, "once per interval, not per refresh")
}
