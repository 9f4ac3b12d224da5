package acceleratorattributesprocessor

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
)

// idleUID is a pod on the node that holds no device.
const idleUID = "6b3e0e2a-1c8d-4f4e-9b7a-2d5c8e1f0a09"

// xidRecord appends a kernel-log XID event on a resource, naming pid when
// it is not 0, as the dcgm receiver writes one.
func xidRecord(rl plog.ResourceLogs, pid int64) pcommon.Map {
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Attributes().PutStr(accelschema.AttrEventName, accelschema.EventXID)
	lr.Attributes().PutInt(accelschema.AttrXID, 43)
	lr.Attributes().PutStr(accelschema.AttrHealthSources, "kernel_log")
	if pid != 0 {
		lr.Attributes().PutInt(accelschema.AttrProcessPID, pid)
		lr.Attributes().PutStr(accelschema.AttrProcessName, "python3")
	}
	return lr.Attributes()
}

// A health event that names a process gets that process's pod, resolved
// through the fake /proc's cgroup files, on the record; the device keeps its
// own identity, and records whose pid resolves to no pod are not changed.
func TestHealthEventProcessMappedToItsPod(t *testing.T) {
	h := newHarness(t,
		ownedPod("a", "p1", vllmUID, "", "", nil),
		ownedPod("a", "p2", embedUID, "", "", nil),
		ownedPod("a", "idle", idleUID, "", "", nil))
	h.kubelet.SetPods(
		prt.Pod("a", "p1", prt.Container("c1", prt.Devices("nvidia.com/gpu", gpu0+"::0"))),
		prt.Pod("a", "p2", prt.Container("c2", prt.Devices("nvidia.com/gpu", gpu0+"::1"))),
		prt.Pod("a", "idle", prt.Container("main")))
	h.writeCgroup(20, "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"+
		strings.ReplaceAll(embedUID, "-", "_")+".slice/cri-containerd-"+cid+".scope\n")
	h.writeCgroup(21, "0::/kubepods/besteffort/pod"+idleUID+"/"+cid+"\n")
	h.writeCgroup(23, "0::/system.slice/nvidia-cuda-mps-server.service\n")
	h.start()

	ld := plog.NewLogs()
	dev := ld.ResourceLogs().AppendEmpty()
	putAttrs(dev.Resource().Attributes(), gpuAttrs(gpu0, 0))
	holder := xidRecord(dev, 20) // p2's container: a holder of the shared GPU
	other := xidRecord(dev, 21)  // a pod on the node that holds no share
	ended := xidRecord(dev, 22)  // no /proc/22: the process has exited
	system := xidRecord(dev, 23) // not a pod's process
	noPID := xidRecord(dev, 0)   // "pid='<unknown>'"
	before := map[string]map[string]any{"ended": ended.AsRaw(), "system": system.AsRaw(), "noPID": noPID.AsRaw()}

	// An XID on a bus id no source knows: the node's resource.
	node := ld.ResourceLogs().AppendEmpty()
	node.Resource().Attributes().PutStr(accelschema.AttrPCIBusID, "0000:c7:00.0")
	onNode := xidRecord(node, 20)

	// A pod's own resource: its pids may be in the pod's namespace, so they
	// are not looked up in the host's /proc.
	inf := ld.ResourceLogs().AppendEmpty()
	inf.Resource().Attributes().PutStr(accelschema.AttrK8sNamespaceName, "a")
	inf.Resource().Attributes().PutStr(accelschema.AttrK8sPodName, "p1")
	inPod := xidRecord(inf, 21)
	inPodBefore := inPod.AsRaw()

	// An application's log through the agent's OTLP receiver: its pid may
	// be its container's own, so it is not looked up.
	app := ld.ResourceLogs().AppendEmpty()
	app.Resource().Attributes().PutStr("service.name", "trainer")
	appLog := app.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Attributes()
	appLog.PutInt(accelschema.AttrProcessPID, 20)
	appBefore := appLog.AsRaw()

	out, err := h.p.processLogs(context.Background(), ld)
	require.NoError(t, err)
	require.Equal(t, 4, out.ResourceLogs().Len())

	res := out.ResourceLogs().At(0).Resource().Attributes()
	assert.Equal(t, gpu0, strAttr(res, accelschema.AttrHWID), "the device keeps its identity")
	assert.Equal(t, "", strAttr(res, accelschema.AttrK8sPodName), "a shared device's event names no holder on its resource")
	assert.Equal(t, "allocated", strAttr(res, accelschema.AttrAllocationState))

	assert.Equal(t, "a", strAttr(holder, accelschema.AttrK8sNamespaceName))
	assert.Equal(t, "p2", strAttr(holder, accelschema.AttrK8sPodName))
	assert.Equal(t, embedUID, strAttr(holder, accelschema.AttrK8sPodUID))
	assert.Equal(t, "c2", strAttr(holder, accelschema.AttrK8sContainerName), "a holder's container comes with it")
	assert.Equal(t, int64(20), holder.AsRaw()[accelschema.AttrProcessPID])
	assert.Equal(t, "python3", strAttr(holder, accelschema.AttrProcessName))

	assert.Equal(t, "idle", strAttr(other, accelschema.AttrK8sPodName), "any pod on the node, by its UID")
	assert.Equal(t, idleUID, strAttr(other, accelschema.AttrK8sPodUID))
	assert.Equal(t, "", strAttr(other, accelschema.AttrK8sContainerName))

	assert.Equal(t, before["ended"], ended.AsRaw())
	assert.Equal(t, before["system"], system.AsRaw())
	assert.Equal(t, before["noPID"], noPID.AsRaw())

	assert.Equal(t, "p2", strAttr(onNode, accelschema.AttrK8sPodName), "an unknown bus id's event still names the pod")
	assert.Equal(t, inPodBefore, inPod.AsRaw())
	assert.Equal(t, appBefore, appLog.AsRaw(), "only health events' pids are the host's")

	assert.Empty(t, h.logs.FilterMessageSnippet("malformed cgroup file").All())
}

// A device held whole by one pod can fail under another pod's process (an
// MPS client, a tool run in a debug pod): the resource says who holds the
// device, the record who ran the process.
func TestHealthEventProcessOfAnotherPodThanTheHolder(t *testing.T) {
	h := newHarness(t, ownedPod("a", "p1", vllmUID, "", "", nil), ownedPod("a", "p2", embedUID, "", "", nil))
	h.kubelet.SetPods(
		prt.Pod("a", "p1", prt.Container("c1", prt.Devices("nvidia.com/gpu", gpu0))),
		prt.Pod("a", "p2", prt.Container("c2")))
	h.writeCgroup(30, "0::/kubepods/pod"+embedUID+"/"+cid+"\n")
	h.writeCgroup(31, "garbage without colons\n")
	h.start()

	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	putAttrs(rl.Resource().Attributes(), gpuAttrs(gpu0, 0))
	rec := xidRecord(rl, 30)
	bad := xidRecord(rl, 31)
	badBefore := bad.AsRaw()
	_, err := h.p.processLogs(context.Background(), ld)
	require.NoError(t, err)

	res := rl.Resource().Attributes()
	assert.Equal(t, "p1", strAttr(res, accelschema.AttrK8sPodName))
	assert.Equal(t, "c1", strAttr(res, accelschema.AttrK8sContainerName))
	assert.Equal(t, "p2", strAttr(rec, accelschema.AttrK8sPodName))
	assert.Equal(t, "", strAttr(rec, accelschema.AttrK8sContainerName), "p1's container is not written on p2's process")
	assert.Equal(t, badBefore, bad.AsRaw())
	assert.Len(t, h.logs.FilterMessageSnippet("malformed cgroup file of a health event's process").All(), 1)
}

// The events the kernel log and NVML write are all health events, by the
// record's event name or its event.name attribute.
func TestHealthEventsAreRecognised(t *testing.T) {
	for _, name := range []string{accelschema.EventXID, accelschema.EventDeviceLost, accelschema.EventNeuronHWError,
		accelschema.EventPCIeAER, accelschema.EventNVSwitchError, accelschema.EventECCUncorrected} {
		lr := plog.NewLogRecord()
		lr.SetEventName(name)
		assert.True(t, isHealthEvent(lr), name)
		lr = plog.NewLogRecord()
		lr.Attributes().PutStr(accelschema.AttrEventName, name)
		assert.True(t, isHealthEvent(lr), name)
	}
	lr := plog.NewLogRecord()
	lr.SetEventName(accelschema.EventFinding)
	assert.False(t, isHealthEvent(lr))
}
