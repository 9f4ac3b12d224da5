package acceleratorattributesprocessor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	mockserver "github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/ecs/dockertest"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/nvmlmig"
)

// dcgm-exporter's MIG series are keyed <parent>/gi<N>; PodResources names
// MIG UUIDs. NVML-source resources in the same pipeline carry both ids.
func TestDCGMExporterMIGJoinedThroughNVMLSourceResources(t *testing.T) {
	h := newHarness(t)
	h.cfg.KubernetesAPI.Enabled = false
	h.kubelet.SetPods(prt.Pod("ml", "nb", prt.Container("jupyter", prt.Devices("nvidia.com/mig-3g.40gb", migA))))
	h.start()

	dcgm := func() pmetric.Metrics {
		md := pmetric.NewMetrics()
		attrs := migAttrs(gpu3+"/gi1", gpu3, 3, 1, "3g.40gb", 0.5)
		addDevice(md, attrs)
		return md
	}
	// Alone, the exporter's series cannot be placed: left as they are, not
	// called unallocated.
	out := h.process(dcgm())
	rm := out.ResourceMetrics().At(0)
	assert.Nil(t, resAttr(rm, accelschema.AttrAllocationState))
	assert.Nil(t, resAttr(rm, accelschema.AttrK8sPodName))

	// An NVML-source resource teaches MIG UUID ↔ <parent>/gi1.
	md := dcgm()
	addDevice(md, migAttrs(migA, gpu3, 3, 1, "3g.40gb", 0.5))
	out = h.process(md)
	for i := 0; i < 2; i++ {
		rm := out.ResourceMetrics().At(i)
		assert.Equal(t, "nb", resAttr(rm, accelschema.AttrK8sPodName), resAttr(rm, accelschema.AttrHWID))
		assert.Equal(t, "jupyter", resAttr(rm, accelschema.AttrK8sContainerName))
	}
	// And remembers it for batches that carry only the exporter's series.
	out = h.process(dcgm())
	assert.Equal(t, "nb", resAttr(out.ResourceMetrics().At(0), accelschema.AttrK8sPodName))
}

// With NVML (go-nvml's mock DGX A100 with one MIG device), the exporter's
// series are placed without any NVML-source resource.
func TestDCGMExporterMIGJoinedThroughNVML(t *testing.T) {
	server := dgxa100.New()
	parent := server.Devices[3].(*mockserver.Device)
	migDev := &mock.Device{
		IsMigDeviceHandleFunc:                  func() (bool, nvml.Return) { return true, nvml.SUCCESS },
		GetDeviceHandleFromMigDeviceHandleFunc: func() (nvml.Device, nvml.Return) { return parent, nvml.SUCCESS },
		GetGpuInstanceIdFunc:                   func() (int, nvml.Return) { return 1, nvml.SUCCESS },
	}
	byUUID := server.DeviceGetHandleByUUIDFunc
	server.DeviceGetHandleByUUIDFunc = func(uuid string) (nvml.Device, nvml.Return) {
		if uuid == migA {
			return migDev, nvml.SUCCESS
		}
		return byUUID(uuid)
	}

	h := newHarness(t)
	h.cfg.KubernetesAPI.Enabled = false
	h.cfg.MIGLookup = migLookupNVML
	h.kubelet.SetPods(prt.Pod("ml", "nb", prt.Container("jupyter", prt.Devices("nvidia.com/mig-3g.40gb", migA))))
	n, err := nvmlmig.OpenWith(server)
	require.NoError(t, err)
	h.mig = n
	h.start()

	md := pmetric.NewMetrics()
	addDevice(md, migAttrs(parent.UUID+"/gi1", parent.UUID, 3, 1, "3g.40gb", 0.5))
	out := h.process(md)
	assert.Equal(t, "nb", resAttr(out.ResourceMetrics().At(0), accelschema.AttrK8sPodName))
}

func TestDCGMExporterHints(t *testing.T) {
	h := newHarness(t, ownedPod("ml", "trainer-0", "uid-t", "StatefulSet", "trainer", map[string]string{"team": "research"}))
	// The kubelet names a MIG UUID, but nothing (no NVML, no NVML-source
	// resource) says which <parent>/gi<N> it is: only the exporter's hint can.
	h.kubelet.SetPods(prt.Pod("ml", "trainer-0", prt.Container("main", prt.Devices("nvidia.com/mig-3g.40gb", migA))))
	h.start()

	hinted := func(hwID, pod string) []kv {
		return append(migAttrs(hwID, gpu3, 3, 1, "3g.40gb", 0.5),
			kv{accelschema.AttrK8sPodName, pod}, kv{accelschema.AttrK8sNamespaceName, "ml"}, kv{accelschema.AttrK8sContainerName, "main"})
	}
	md := pmetric.NewMetrics()
	addDevice(md, hinted(gpu3+"/gi1", "trainer-0")) // a pod that runs here
	addDevice(md, hinted(gpu3+"/gi2", "gone-0"))    // a pod that does not
	out := h.process(md)

	ok := out.ResourceMetrics().At(0)
	assert.Equal(t, "trainer-0", resAttr(ok, accelschema.AttrK8sPodName))
	assert.Equal(t, "main", resAttr(ok, accelschema.AttrK8sContainerName))
	assert.Equal(t, "research", resAttr(ok, accelschema.AttrTeam), "a confirmed hint gets the pod's team")
	assert.Equal(t, "allocated", resAttr(ok, accelschema.AttrAllocationState))

	stale := out.ResourceMetrics().At(1)
	assert.Nil(t, resAttr(stale, accelschema.AttrK8sPodName), "a hint naming a pod not on this node is removed")
	assert.Nil(t, resAttr(stale, accelschema.AttrK8sContainerName))
}

func TestNeuronThroughProcessor(t *testing.T) {
	h := newHarness(t)
	h.cfg.KubernetesAPI.Enabled = false
	h.kubelet.SetPods(
		prt.Pod("ml", "bert", prt.Container("c", prt.Devices("aws.amazon.com/neuroncore", "0", "1"))),
		prt.Pod("ml", "llama", prt.Container("c", prt.Devices("aws.amazon.com/neuron", "1"))),
	)
	h.start()
	neuron := func(dev, core int) []kv {
		attrs := []kv{{accelschema.AttrHWType, accelschema.HWTypeGPU}, {accelschema.AttrHWVendor, accelschema.VendorAWS},
			{accelschema.AttrKind, accelschema.KindAWSNeuron}, {accelschema.AttrDeviceIndex, dev}, {accelschema.AttrHWModel, "inferentia2"}}
		dID := "neuron_device_" + string(rune('0'+dev))
		if core < 0 {
			return append(attrs, kv{accelschema.AttrHWID, dID}, kv{accelschema.AttrPartitionType, accelschema.PartitionNone}, kv{accelschema.AttrPartitionShare, 1.0})
		}
		return append(attrs, kv{accelschema.AttrHWID, dID + "/neuroncore_" + string(rune('0'+core))}, kv{accelschema.AttrHWParent, dID},
			kv{accelschema.AttrNeuronCoreIndex, core}, kv{accelschema.AttrPartitionType, accelschema.PartitionNeuronCore},
			kv{accelschema.AttrPartitionID, string(rune('0' + core))}, kv{accelschema.AttrPartitionShare, 0.5})
	}
	md := pmetric.NewMetrics()
	// The devices carry what is counted per device; their cores, utilization.
	addDeviceReadings(md, neuron(0, -1))
	addDevice(md, neuron(0, 0))
	addDevice(md, neuron(0, 1))
	addDeviceReadings(md, neuron(1, -1))
	addDevice(md, neuron(1, 2))
	addDevice(md, neuron(1, 3))
	got := h.process(md)
	out := resourcesByID(got)

	// Device 0's two cores are both bert's: the device is bert's whole.
	assert.Equal(t, "bert", resAttr(out["neuron_device_0"][0], accelschema.AttrK8sPodName))
	assert.Equal(t, 1.0, resAttr(out["neuron_device_0"][0], accelschema.AttrPartitionShare))
	assert.Equal(t, "bert", resAttr(out["neuron_device_0/neuroncore_1"][0], accelschema.AttrK8sPodName))
	assert.Equal(t, 0.5, resAttr(out["neuron_device_0/neuroncore_1"][0], accelschema.AttrPartitionShare))
	// Device 1 is llama's, and so are its cores.
	assert.Equal(t, "llama", resAttr(out["neuron_device_1"][0], accelschema.AttrK8sPodName))
	assert.Equal(t, "llama", resAttr(out["neuron_device_1/neuroncore_3"][0], accelschema.AttrK8sPodName))
	assert.Equal(t, "neuroncore", resAttr(out["neuron_device_1/neuroncore_3"][0], accelschema.AttrPartitionType))

	// The holdings are the cores, which the receiver reports: a device
	// beside its cores carries no allocation series, or its holder would
	// hold it twice.
	for _, dev := range []string{"neuron_device_0", "neuron_device_1"} {
		_, has := allocation(t, out[dev][0])
		assert.False(t, has, dev)
	}
	v, ok := allocation(t, out["neuron_device_1/neuroncore_3"][0])
	assert.True(t, ok)
	assert.Equal(t, 0.5, v)
	assert.Empty(t, countcheck.Violations(got))
}

func TestECSMPSWithPerProcessData(t *testing.T) {
	dir, err := os.MkdirTemp("", "ecs")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "docker.sock")
	docker, err := dockertest.Start(sock)
	require.NoError(t, err)
	t.Cleanup(docker.Close)
	list, inspect := ecsFixtures(t)
	docker.SetContainers(list, inspect)

	h := newHarness(t)
	h.cfg.PodResourcesSocket = ""
	h.cfg.KubernetesAPI.Enabled = false
	h.cfg.ECS = ECSConfig{Enabled: true, DockerSocket: sock}
	h.cfg.NodeName = ""
	vllmID := list[0]["Id"].(string)
	h.writeCgroup(7001, "0::/system.slice/docker-"+vllmID+".scope\n")
	h.writeCgroup(7002, "11:memory:/ecs/0f6c3e0e3a2b4c5d8e9f0a1b2c3d4e5f/"+strings.Repeat("e", 64)+"\n")
	h.start()

	// The fixture's GPU: vllm 50 % and embed 25 % through MPS.
	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs("GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e5f", 0), 7001, 7002)
	got := h.process(md)
	compareGolden(t, "ecs.yaml", got)

	byID := resourcesByID(got)["GPU-8f3c2a5e-1d2b-4c3d-9e8f-0a1b2c3d4e5f"]
	require.Len(t, byID, 3)
	rest, vllm, embed := byID[0], byID[1], byID[2]
	assert.Equal(t, "vllm", resAttr(vllm, accelschema.AttrContainerName))
	assert.Equal(t, "llm-serve", resAttr(vllm, accelschema.AttrECSTaskFamily))
	assert.Equal(t, "search", resAttr(vllm, accelschema.AttrTeam))
	assert.Equal(t, "mps", resAttr(vllm, accelschema.AttrPartitionType))
	assert.Equal(t, 0.5, resAttr(vllm, accelschema.AttrPartitionShare))
	assert.Equal(t, []int64{7001}, pids(vllm))
	assert.Equal(t, 0.25, resAttr(embed, accelschema.AttrPartitionShare))
	assert.Empty(t, pids(embed))
	assert.Equal(t, "unallocated", resAttr(rest, accelschema.AttrAllocationState), "the GPU's own resource: the quarter nobody holds")
	assert.Equal(t, 0.25, resAttr(rest, accelschema.AttrPartitionShare))
	assert.Nil(t, resAttr(rest, accelschema.AttrHWParent))
	assert.Equal(t, []int64{7002}, pids(rest), "a container that holds no share of this GPU")
	assert.Empty(t, countcheck.Violations(got))

	// Index 3 of the second container (NVIDIA_VISIBLE_DEVICES=…, 3), a
	// quarter of it through MPS: the GPU's own resource keeps the rest.
	md = pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu2, 3))
	got = h.process(md)
	require.Equal(t, 2, got.ResourceMetrics().Len())
	assert.Equal(t, 0.75, resAttr(got.ResourceMetrics().At(0), accelschema.AttrPartitionShare))
	assert.Equal(t, "embed", resAttr(got.ResourceMetrics().At(1), accelschema.AttrContainerName))
}

func ecsFixtures(t *testing.T) ([]map[string]any, map[string]json.RawMessage) {
	raw, err := os.ReadFile("internal/ecs/testdata/containers.json")
	require.NoError(t, err)
	var list []map[string]any
	require.NoError(t, json.Unmarshal(raw, &list))
	inspect := map[string]json.RawMessage{}
	for i, c := range list {
		b, err := os.ReadFile(filepath.Join("internal/ecs/testdata", "inspect_"+string(rune('0'+i))+".json"))
		require.NoError(t, err)
		inspect[c["Id"].(string)] = b
	}
	return list, inspect
}

func TestStaticMappingReload(t *testing.T) {
	h := newHarness(t)
	h.cfg.PodResourcesSocket = ""
	h.cfg.KubernetesAPI.Enabled = false
	path := filepath.Join(h.dir, "jobs.csv")
	require.NoError(t, os.WriteFile(path, []byte("device,job_id,team,workload_name,workload_type\n"+gpu0+",81234,research,pretrain,training\n"), 0o644))
	h.cfg.Static = StaticConfig{File: path, ReloadInterval: time.Second}
	h.start()

	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0))
	addDevice(md, gpuAttrs(gpu1, 1))
	out := h.process(md)
	assert.Equal(t, "81234", resAttr(out.ResourceMetrics().At(0), accelschema.AttrJobID))
	assert.Equal(t, "training", resAttr(out.ResourceMetrics().At(0), accelschema.AttrWorkloadType))
	assert.Equal(t, "unallocated", resAttr(out.ResourceMetrics().At(1), accelschema.AttrAllocationState))

	// The job moves to GPU 1 (by index).
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.WriteFile(path, []byte("device,job_id,team\n1,81300,research\n"), 0o644))
	require.NoError(t, os.Chtimes(path, later, later))
	h.p.refresh(context.Background())
	md = pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0))
	addDevice(md, gpuAttrs(gpu1, 1))
	out = h.process(md)
	assert.Equal(t, "unallocated", resAttr(out.ResourceMetrics().At(0), accelschema.AttrAllocationState))
	assert.Nil(t, resAttr(out.ResourceMetrics().At(0), accelschema.AttrJobID))
	assert.Equal(t, "81300", resAttr(out.ResourceMetrics().At(1), accelschema.AttrJobID))

	// A broken file keeps the last good mapping, and says so once.
	later = later.Add(time.Minute)
	require.NoError(t, os.WriteFile(path, []byte("device,job_id\n1\n"), 0o644))
	require.NoError(t, os.Chtimes(path, later, later))
	h.p.refresh(context.Background())
	h.p.refresh(context.Background())
	md = pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu1, 1))
	out = h.process(md)
	assert.Equal(t, "81300", resAttr(out.ResourceMetrics().At(0), accelschema.AttrJobID))
	failures := h.logs.FilterMessage("accelerator_attributes: static mapping reload failed").All()
	require.Len(t, failures, 1, "rate-limited")
	assert.Contains(t, failures[0].ContextMap()["error"], "jobs.csv: record on line 2")
}

func TestNoSocketPassesThroughAndRecovers(t *testing.T) {
	h := newHarness(t)
	h.cfg.KubernetesAPI.Enabled = false
	h.kubelet.Stop() // no kubelet socket: not mounted
	h.kubelet.SetPods(prt.Pod("ml", "p", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0))))
	h.start()

	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0))
	want := pmetric.NewMetrics()
	md.CopyTo(want)
	out := h.process(md)
	rm := out.ResourceMetrics().At(0)
	assert.Nil(t, resAttr(rm, accelschema.AttrK8sPodName))
	assert.Nil(t, resAttr(rm, accelschema.AttrAllocationState), "without the kubelet nothing can be called unallocated")
	assert.Equal(t, want.DataPointCount(), out.DataPointCount())

	ev := h.host.last()
	require.NotNil(t, ev)
	assert.Equal(t, componentstatus.StatusRecoverableError, ev.Status())
	assert.Contains(t, ev.Err().Error(), "mount the host directory "+h.dir)
	assert.Contains(t, ev.Err().Error(), "devices pass through without pod attribution")
	logged := h.logs.FilterMessageSnippet("kubelet PodResources unavailable").All()
	require.Len(t, logged, 1)
	h.p.refresh(context.Background())
	assert.Len(t, h.logs.FilterMessageSnippet("kubelet PodResources unavailable").All(), 1, "one message per interval, not per refresh")

	// The kubelet comes (back): the same client reconnects.
	require.NoError(t, h.kubelet.Start(h.socket))
	require.Eventually(t, func() bool {
		h.p.refresh(context.Background())
		return h.host.last().Status() == componentstatus.StatusOK
	}, 20*time.Second, 100*time.Millisecond)
	md = pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0))
	out = h.process(md)
	assert.Equal(t, "p", resAttr(out.ResourceMetrics().At(0), accelschema.AttrK8sPodName))
}

func TestForbiddenAPIKeepsPodResourcesNames(t *testing.T) {
	h := newHarness(t)
	h.client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
			errString(`User "system:serviceaccount:otel:collector" cannot list resource "pods" in API group "" at the cluster scope`))
	})
	h.kubelet.SetPods(prt.Pod("ml", "p", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0))))
	h.start()
	require.Eventually(t, func() bool { h.p.refresh(context.Background()); return h.host.last() != nil }, 10*time.Second, 20*time.Millisecond)

	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0))
	addDevice(md, gpuAttrs(gpu1, 1))
	out := h.process(md)
	rm := out.ResourceMetrics().At(0)
	assert.Equal(t, "p", resAttr(rm, accelschema.AttrK8sPodName))
	assert.Equal(t, "c", resAttr(rm, accelschema.AttrK8sContainerName))
	assert.Nil(t, resAttr(rm, accelschema.AttrK8sPodUID))
	assert.Equal(t, "unallocated", resAttr(out.ResourceMetrics().At(1), accelschema.AttrAllocationState))

	ev := h.host.last()
	assert.Equal(t, componentstatus.StatusRecoverableError, ev.Status())
	assert.Contains(t, ev.Err().Error(), "grant the verbs get, list, watch on pods")
}

// Off Kubernetes (no K8S_NODE_NAME), the agent config still enables the API
// source: the processor must start, keep attributing from PodResources, and
// say once what is missing.
func TestNoNodeNameDegradesTheAPISource(t *testing.T) {
	h := newHarness(t)
	h.cfg.NodeName = ""
	require.NoError(t, h.cfg.Validate())
	h.kubelet.SetPods(prt.Pod("ml", "p", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0))))
	h.start()
	assert.Nil(t, h.p.watcher(), "no API watch without a node to watch")

	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0))
	out := h.process(md)
	assert.Equal(t, "p", resAttr(out.ResourceMetrics().At(0), accelschema.AttrK8sPodName))

	ev := h.host.last()
	require.NotNil(t, ev)
	assert.Equal(t, componentstatus.StatusRecoverableError, ev.Status())
	assert.Contains(t, ev.Err().Error(), "node_name is empty, so the Kubernetes API source is off")
	assert.Contains(t, ev.Err().Error(), "fieldPath: spec.nodeName")
}

type errString string

func (e errString) Error() string { return string(e) }

func TestUnknownDeviceTriggersRefresh(t *testing.T) {
	h := newHarness(t)
	h.cfg.KubernetesAPI.Enabled = false
	h.start()
	// Start the loop's consumer of kicks with a short minimum spacing.
	before := h.kubelet.ListCalls()
	h.kubelet.SetPods(prt.Pod("ml", "new", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu5))))
	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu5, 5))
	time.Sleep(minKickInterval) // the start-up refresh was just now
	h.process(md)
	require.Eventually(t, func() bool { return h.kubelet.ListCalls() > before }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		md := pmetric.NewMetrics()
		addDevice(md, gpuAttrs(gpu5, 5))
		return resAttr(h.process(md).ResourceMetrics().At(0), accelschema.AttrK8sPodName) == "new"
	}, 10*time.Second, 20*time.Millisecond)
}

// A device nobody holds asks for an early refresh once per kickPerKey, not
// on every batch.
func TestUnknownDeviceAsksOncePerMinute(t *testing.T) {
	h := newHarness(t)
	h.cfg.KubernetesAPI.Enabled = false
	h.start()
	md := func() pmetric.Metrics {
		md := pmetric.NewMetrics()
		addDevice(md, gpuAttrs(gpu5, 5))
		return md
	}
	time.Sleep(minKickInterval) // the start-up refresh was just now
	before := h.kubelet.ListCalls()
	h.process(md())
	require.Eventually(t, func() bool { return h.kubelet.ListCalls() == before+1 }, 10*time.Second, 10*time.Millisecond)
	time.Sleep(minKickInterval)
	for range 5 {
		h.process(md())
	}
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, before+1, h.kubelet.ListCalls(), "still unknown, but it asked less than a minute ago")
}

// When every share is held, the GPU's own resource stands for nothing
// (share 0) but still carries the device's readings and the processes of
// no consumer (an MPS server, a pid that ended): nothing is lost, nothing
// is paid twice.
func TestProcessesOfNoConsumerStayOnTheDevice(t *testing.T) {
	h := newHarness(t, ownedPod("a", "p1", vllmUID, "", "", nil), ownedPod("a", "p2", embedUID, "", "", nil))
	h.kubelet.SetPods(
		prt.Pod("a", "p1", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0+"::0"))),
		prt.Pod("a", "p2", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0+"::1"))))
	h.writeCgroup(10, "0::/kubepods/pod"+vllmUID+"/"+cid+"\n")
	h.writeCgroup(11, "0::/system.slice/nvidia-cuda-mps-server.service\n")
	h.start()
	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0), 10, 11, 12) // 12: no such process
	got := h.process(md)
	out := resourcesByID(got)[gpu0]
	require.Len(t, out, 3)
	device, p1, p2 := out[0], out[1], out[2]
	assert.Equal(t, 0.0, resAttr(device, accelschema.AttrPartitionShare))
	assert.Equal(t, "allocated", resAttr(device, accelschema.AttrAllocationState))
	assert.Nil(t, resAttr(device, accelschema.AttrK8sPodName))
	assert.Equal(t, []int64{11, 12}, pids(device))
	assert.Contains(t, metricNames(device), accelschema.MetricPower)
	assert.Equal(t, 0.5, resAttr(p1, accelschema.AttrPartitionShare))
	assert.Equal(t, []int64{10}, pids(p1))
	assert.Empty(t, pids(p2))
	assert.Len(t, h.logs.FilterMessageSnippet("cannot read a GPU process's cgroup").All(), 1)
	assert.Empty(t, countcheck.Violations(got))
}

func TestLogsEnrichedInPlace(t *testing.T) {
	h := newHarness(t)
	h.cfg.KubernetesAPI.Enabled = false
	h.kubelet.SetPods(
		prt.Pod("ml", "solo", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0))),
		prt.Pod("ml", "a", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu1+"::0"))),
		prt.Pod("ml", "b", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu1+"::1"))))
	h.start()
	ld := plog.NewLogs()
	for _, id := range []string{gpu0, gpu1} {
		rl := ld.ResourceLogs().AppendEmpty()
		putAttrs(rl.Resource().Attributes(), gpuAttrs(id, 0))
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.Attributes().PutStr(accelschema.AttrEventName, accelschema.EventXID)
		lr.Attributes().PutInt(accelschema.AttrXID, 79)
	}
	out, err := h.p.processLogs(context.Background(), ld)
	require.NoError(t, err)
	require.Equal(t, 2, out.ResourceLogs().Len(), "events are never copied")
	solo := out.ResourceLogs().At(0).Resource().Attributes()
	assert.Equal(t, "solo", strAttr(solo, accelschema.AttrK8sPodName))
	shared := out.ResourceLogs().At(1).Resource().Attributes()
	assert.Equal(t, "", strAttr(shared, accelschema.AttrK8sPodName))
	assert.Equal(t, "allocated", strAttr(shared, accelschema.AttrAllocationState))
	assert.Equal(t, nodeName, strAttr(shared, accelschema.AttrK8sNodeName))
}

func TestNodeLabelsNeedNoDevices(t *testing.T) {
	h := newHarness(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{"node.kubernetes.io/instance-type": "g6e.12xlarge"}}})
	h.start()
	md := pmetric.NewMetrics()
	attrs := gpuAttrs(gpu0, 0)
	attrs = append(attrs, kv{accelschema.AttrHostType, "from-imds"})
	addDevice(md, attrs)
	out := h.process(md)
	assert.Equal(t, "from-imds", resAttr(out.ResourceMetrics().At(0), accelschema.AttrHostType), "receivers' own host facts win")
	assert.Equal(t, nodeName, resAttr(out.ResourceMetrics().At(0), accelschema.AttrK8sNodeName))
}

func TestKubeletOutageKeepsLastHoldersButClaimsNothingUnallocated(t *testing.T) {
	h := newHarness(t)
	h.cfg.KubernetesAPI.Enabled = false
	h.kubelet.SetPods(prt.Pod("ml", "p", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0))))
	h.start()
	h.kubelet.Stop()
	h.p.refresh(context.Background())

	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0))
	addDevice(md, gpuAttrs(gpu1, 1))
	out := h.process(md)
	assert.Equal(t, "p", resAttr(out.ResourceMetrics().At(0), accelschema.AttrK8sPodName), "the last answer still holds")
	assert.Nil(t, resAttr(out.ResourceMetrics().At(1), accelschema.AttrAllocationState), "but a miss proves nothing now")
	assert.Equal(t, componentstatus.StatusRecoverableError, h.host.last().Status())

	for i := 0; i < staleAfter; i++ {
		h.p.refresh(context.Background())
	}
	md = pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0))
	out = h.process(md)
	assert.Nil(t, resAttr(out.ResourceMetrics().At(0), accelschema.AttrK8sPodName), "too old to trust")
}

func TestHintForANewPodIsFetchedWithGet(t *testing.T) {
	h := newHarness(t)
	h.cfg.KubernetesAPI.Enabled = false
	h.kubelet.SetPods(prt.Pod("ml", "old", prt.Container("c", prt.Devices("nvidia.com/mig-1g.10gb", migB))))
	h.start()
	// A pod starts after the last List; dcgm-exporter already names it.
	h.kubelet.SetPods(prt.Pod("ml", "old", prt.Container("c", prt.Devices("nvidia.com/mig-1g.10gb", migB))),
		prt.Pod("ml", "new", prt.Container("main", prt.Devices("nvidia.com/mig-1g.10gb", migA))))
	batch := func() pmetric.Metrics {
		md := pmetric.NewMetrics()
		addDevice(md, append(migAttrs(gpu3+"/gi1", gpu3, 3, 1, "1g.10gb", 1.0/7),
			kv{accelschema.AttrK8sPodName, "new"}, kv{accelschema.AttrK8sNamespaceName, "ml"}, kv{accelschema.AttrK8sContainerName, "main"}))
		return md
	}
	h.process(batch())
	require.Eventually(t, func() bool { return h.kubelet.GetCalls() > 0 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		rm := h.process(batch()).ResourceMetrics().At(0)
		return resAttr(rm, accelschema.AttrK8sPodName) == "new" && resAttr(rm, accelschema.AttrAllocationState) == "allocated"
	}, 10*time.Second, 20*time.Millisecond)
}

// A refresh whose sources answer as before keeps the index it has (the
// periodic refresh of a settled node builds nothing); a changed answer
// builds a new one at once.
func TestRefreshRebuildsOnlyWhenAnAnswerChanged(t *testing.T) {
	h := newHarness(t)
	h.kubelet.SetPods(prt.Pod("ml", "p", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0))))
	h.start()
	for !h.p.watcher().Synced() {
		time.Sleep(5 * time.Millisecond)
	}
	h.p.refresh(context.Background())
	built := h.p.idx.Load()
	h.p.refresh(context.Background())
	h.p.refresh(context.Background())
	assert.Same(t, built, h.p.idx.Load(), "nothing changed: the same index")

	h.kubelet.SetPods(prt.Pod("ml", "q", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu1))))
	h.p.refresh(context.Background())
	assert.NotSame(t, built, h.p.idx.Load())
	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0))
	addDevice(md, gpuAttrs(gpu1, 1))
	out := h.process(md)
	assert.Equal(t, "unallocated", resAttr(out.ResourceMetrics().At(0), accelschema.AttrAllocationState))
	assert.Equal(t, "q", resAttr(out.ResourceMetrics().At(1), accelschema.AttrK8sPodName))
}
