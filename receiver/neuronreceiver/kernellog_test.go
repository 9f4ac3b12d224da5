package neuronreceiver

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/kernellog"
)

// The Neuron driver's NEURON_HW_ERR lines in a followed kernel log become
// health events on the device the line names (nd-id), classified by
// internal/xid, with the kernel log as their source; a line that names no
// device is the host's.
func TestKernelLogNeuronHardwareErrors(t *testing.T) {
	kern := filepath.Join(t.TempDir(), "kern.log")
	require.NoError(t, os.WriteFile(kern, nil, 0o600))
	cfg := subprocessConfig(t, "inf2.json")
	cfg.Health.KernelLog.Source = kernellog.SourceFile
	cfg.Health.KernelLog.Path = kern
	require.NoError(t, cfg.Validate())
	h := newHarness(t, cfg)
	h.waitForReports(1)

	require.NoError(t, os.WriteFile(kern, []byte(
		"Dec  1 21:15:02 ip-172-31-61-252 kernel: NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR instance-id=i-0592464924bd45322 hostname=ip-172-31-61-252 nd-id=0 nc-id=1 serial-num=19fcda00f5ff6eb9 action=TERMINATE_INSTANCE\n"+
			"Dec  1 21:15:03 ip-172-31-61-252 kernel: eth0: link up\n"+
			"Dec  1 21:16:00 ip-172-31-61-252 kernel: NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR affecting neuron devices\n"+
			// An NVIDIA line is the dcgm receiver's, a USB controller's PCIe
			// error no accelerator's: both counted as skipped, no event.
			"Dec  1 21:16:30 ip-172-31-61-252 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"+
			"Dec  1 21:16:31 ip-172-31-61-252 kernel: xhci_hcd 0000:97:00.0: AER: can't recover (no error_detected callback)\n"+
			// A fatal PCIe error the Neuron driver's device printed.
			"Dec  1 21:17:00 ip-172-31-61-252 kernel: neuron 0000:00:1e.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)\n"), 0o600))
	require.Eventually(t, func() bool { return len(kernelEvents(h)) >= 3 }, 30*time.Second, 10*time.Millisecond)
	h.stop()
	got := kernelEvents(h)

	assert.Equal(t, []event{
		{hwID: "neuron_device_0", action: accelschema.ActionReplaceDevice, state: accelschema.HWStateFailed, sources: "kernel_log"},
		{action: accelschema.ActionReplaceDevice, state: accelschema.HWStateFailed, sources: "kernel_log"},
		{action: accelschema.ActionRebootNode, state: accelschema.HWStateFailed, sources: "kernel_log"},
	}, got)
}

type event struct{ hwID, action, state, sources string }

// kernelEvents are the health events the kernel log gave.
func kernelEvents(h *harness) []event {
	var got []event
	for _, l := range h.events.AllLogs() {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			rl := l.ResourceLogs().At(i)
			lrs := rl.ScopeLogs().At(0).LogRecords()
			for j := 0; j < lrs.Len(); j++ {
				a := lrs.At(j).Attributes()
				src, ok := a.Get(accelschema.AttrHealthSources)
				if !ok || src.Str() != "kernel_log" {
					continue // neuron-monitor's own ECC events
				}
				e := event{sources: src.Str()}
				if v, ok := rl.Resource().Attributes().Get(accelschema.AttrHWID); ok {
					e.hwID = v.Str()
				}
				v, _ := a.Get(accelschema.AttrHealthAction)
				e.action = v.Str()
				v, _ = a.Get(accelschema.AttrHWState)
				e.state = v.Str()
				got = append(got, e)
			}
		}
	}
	return got
}
