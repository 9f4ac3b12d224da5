package dcgmreceiver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/kernellog"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/nvmltest"
)

type loggedEvent struct {
	hwID, bus, sources, process string
	xid, pid                    int64
	event                       string
}

// healthRecord is what an operator reads of a health event: what
// loggedEvent names, and the state, action and failure mode.
type healthRecord struct {
	loggedEvent
	state, action, mode string
}

func loggedEvents(logs plog.Logs) []loggedEvent {
	var out []loggedEvent
	for _, r := range healthRecordsOf(logs) {
		out = append(out, r.loggedEvent)
	}
	return out
}

// healthRecords reads what the sink holds without taking it (allLogs
// moves the records out).
func healthRecords(sink []plog.Logs) []healthRecord {
	var out []healthRecord
	for _, logs := range sink {
		out = append(out, healthRecordsOf(logs)...)
	}
	return out
}

func healthRecordsOf(logs plog.Logs) []healthRecord {
	var out []healthRecord
	for i := 0; i < logs.ResourceLogs().Len(); i++ {
		rl := logs.ResourceLogs().At(i)
		res := rl.Resource().Attributes()
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				a := lrs.At(k).Attributes()
				e := loggedEvent{event: lrs.At(k).EventName()}
				if v, ok := res.Get(accelschema.AttrHWID); ok {
					e.hwID = v.Str()
				}
				if v, ok := res.Get(accelschema.AttrPCIBusID); ok {
					e.bus = v.Str()
				}
				if v, ok := a.Get(accelschema.AttrHealthSources); ok {
					e.sources = v.Str()
				}
				if v, ok := a.Get(accelschema.AttrXID); ok {
					e.xid = v.Int()
				}
				if v, ok := a.Get(accelschema.AttrProcessPID); ok {
					e.pid = v.Int()
				}
				if v, ok := a.Get(accelschema.AttrProcessName); ok {
					e.process = v.Str()
				}
				r := healthRecord{loggedEvent: e}
				if v, ok := a.Get(accelschema.AttrHWState); ok {
					r.state = v.Str()
				}
				if v, ok := a.Get(accelschema.AttrHealthAction); ok {
					r.action = v.Str()
				}
				if v, ok := a.Get(accelschema.AttrHealthFailureMode); ok {
					r.mode = v.Str()
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// The same XID from NVML's event set and from the kernel log is one event
// with both sources and the kernel's pid, counted once in hw.errors; an XID
// on a bus no source knows still gives its event, on a resource naming the
// bus; a PCIe AER error on a GPU's bus is an event on that GPU.
func TestKernelLogXIDsDeduplicatedAgainstNVML(t *testing.T) {
	f, err := nvmltest.New(nvmltest.Options{Model: "h100"})
	require.NoError(t, err)
	kern := filepath.Join(t.TempDir(), "kern.log")
	require.NoError(t, os.WriteFile(kern, nil, 0o600))
	cfg := manualConfig()
	cfg.Health.KernelLog.Source = kernellog.SourceFile
	cfg.Health.KernelLog.Path = kern
	cfg.Health.KernelLog.DedupWindow = time.Second
	h := start(t, cfg, testWorld(t, f))
	h.waitNVML(t)
	md := h.scrape(t)

	busOf := map[string]string{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		a := md.ResourceMetrics().At(i).Resource().Attributes()
		id, _ := a.Get(accelschema.AttrHWID)
		bus, _ := a.Get(accelschema.AttrPCIBusID)
		busOf[id.Str()] = bus.Str()
	}
	canonical, ok := kernellog.CanonicalBus(busOf[nvmltest.UUID(2)])
	require.True(t, ok, "GPU 2's bus id %q", busOf[nvmltest.UUID(2)])
	nvrm := "PCI:" + strings.TrimSuffix(canonical, ".0") // NVRM prints no function

	f.InjectXID(2, 79, -1)
	stamp := time.Now().UTC().Format(time.RFC3339Nano)
	lines := fmt.Sprintf("%[1]s gpu-node-1 kernel: NVRM: Xid (%[2]s): 79, pid=4242, name=python3, GPU has fallen off the bus.\n"+
		"%[1]s gpu-node-1 kernel: NVRM: GPU %[3]s: GPU has fallen off the bus.\n"+
		"%[1]s gpu-node-1 kernel: NVRM: Xid (PCI:0000:ff:00): 13, pid='<unknown>', name=<unknown>, Graphics Exception\n"+
		"%[1]s gpu-node-1 kernel: nvidia %[3]s: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n"+
		"%[1]s gpu-node-1 kernel: e1000e 0000:00:1f.6: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)\n", stamp, nvrm, canonical)
	f2, err := os.OpenFile(kern, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f2.WriteString(lines)
	require.NoError(t, err)
	require.NoError(t, f2.Close())

	require.Eventually(t, func() bool { return h.logs.LogRecordCount() >= 3 }, 30*time.Second, 10*time.Millisecond)
	// The AER line of a device that is no GPU gives nothing; the held XID
	// events have gone out (the count stays).
	got := loggedEvents(h.allLogs())
	assert.ElementsMatch(t, []loggedEvent{
		{hwID: nvmltest.UUID(2), bus: busOf[nvmltest.UUID(2)], sources: "kernel_log,nvml", xid: 79, pid: 4242, process: "python3", event: accelschema.EventXID},
		{bus: "0000:ff:00.0", sources: "kernel_log", xid: 13, event: accelschema.EventXID},
		{hwID: nvmltest.UUID(2), bus: busOf[nvmltest.UUID(2)], sources: "kernel_log", event: accelschema.EventPCIeAER},
	}, got)

	_, xids := deviceMetrics(t, h.scrape(t), nvmltest.UUID(2))
	assert.Equal(t, map[int64]int64{79: 1}, xids, "one XID 79, whoever saw it")
}
