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
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/kernellog"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/nvmltest"
)

// kernelLogReceiver starts the receiver on an H100 node whose kernel log
// is a file, with a sysfs tree in which GPU 2 sits behind the root port
// 0000:00:03.0, and returns GPU 2's bus id in canonical form.
func kernelLogReceiver(t *testing.T, opts ...func(*receiver.Settings)) (*harness, string, string) {
	f, err := nvmltest.New(nvmltest.Options{Model: "h100"})
	require.NoError(t, err)
	dir := t.TempDir()
	kern := filepath.Join(dir, "kern.log")
	require.NoError(t, os.WriteFile(kern, nil, 0o600))
	cfg := manualConfig()
	cfg.Health.KernelLog.Source = kernellog.SourceFile
	cfg.Health.KernelLog.Path = kern
	cfg.Health.KernelLog.DedupWindow = 2 * time.Second
	h := start(t, cfg, testWorld(t, f), opts...)
	h.waitNVML(t)
	md := h.scrape(t)
	var gpu2 string
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		a := md.ResourceMetrics().At(i).Resource().Attributes()
		if id, _ := a.Get(accelschema.AttrHWID); id.Str() == nvmltest.UUID(2) {
			bus, _ := a.Get(accelschema.AttrPCIBusID)
			gpu2, _ = kernellog.CanonicalBus(bus.Str())
		}
	}
	require.NotEmpty(t, gpu2)
	sys := filepath.Join(dir, "sys")
	for bus, path := range map[string]string{
		"0000:00:03.0": "pci0000:00/0000:00:03.0",
		gpu2:           "pci0000:00/0000:00:03.0/" + gpu2,
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(sys, "devices", path), 0o755))
		link := filepath.Join(sys, "bus", "pci", "devices", bus)
		require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
		require.NoError(t, os.Symlink(filepath.Join("..", "..", "..", "devices", path), link))
	}
	h.r.kernel.topology.SysPath = sys
	return h, kern, gpu2
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// The fatal PCIe error of rwth-i6/returnn#1500 (testdata of
// internal/kernellog), on this node's GPU 2 and its root port, written as
// dmesg --time-format iso writes it: one fatal event on the GPU, with the
// port as evidence; the same fault's other lines (the card's audio
// function, the port's own report, the failed recovery) counted as
// duplicates; a USB controller's error counted as no accelerator's.
func TestFatalPCIeErrorOnTheRootPortAboveAGPU(t *testing.T) {
	tt, opt := withTelemetry(t)
	h, kern, gpu := kernelLogReceiver(t, opt)
	audio := strings.TrimSuffix(gpu, ".0") + ".1"
	now := time.Now().UTC()
	iso := func(d time.Duration) string { return dmesgISO(now.Add(d)) }
	appendLines(t, kern,
		iso(0)+"nvidia "+gpu+": AER: can't recover (no error_detected callback)",
		iso(1*time.Microsecond)+"snd_hda_intel "+audio+": AER: can't recover (no error_detected callback)",
		iso(9*time.Microsecond)+"pcieport 0000:00:03.0: AER: device recovery failed",
		iso(10*time.Microsecond)+"pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0",
		iso(14*time.Microsecond)+"pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)",
		iso(2*time.Millisecond)+"pcieport 0000:00:03.0: AER: Root Port link has been reset (0)",
		iso(3*time.Millisecond)+"xhci_hcd 0000:97:00.0: AER: can't recover (no error_detected callback)",
	)
	var got []healthRecord
	require.Eventually(t, func() bool {
		got = healthRecords(h.logs.AllLogs())
		return len(got) >= 1 && skippedLines(t, tt)["not_accelerator"] >= 1
	}, 30*time.Second, 10*time.Millisecond, "records %v, skipped %v", got, skippedLines(t, tt))
	require.Len(t, got, 1, "one fault, one event: %v", got)
	assert.Equal(t, healthRecord{loggedEvent: loggedEvent{hwID: nvmltest.UUID(2), bus: got[0].bus, sources: "kernel_log", event: accelschema.EventPCIeAER},
		state: accelschema.HWStateFailed, action: accelschema.ActionRebootNode, mode: accelschema.FailureModeInterconnect}, got[0])
	skipped := skippedLines(t, tt)
	assert.Equal(t, int64(5), skipped["duplicate"], "the audio function, the port's recovery, the port's report with its bus error and link reset lines")
	assert.Zero(t, skipped["informational"], "the link reset is part of the port's report")
	assert.Equal(t, int64(1), skipped["not_accelerator"], "the USB controller")
	assert.True(t, h.logged.FilterMessageSnippet("not_accelerator").Len()+h.logged.FilterMessageSnippet("no accelerator on it").Len() > 0,
		"the skipped line is logged with where it was and why")
}

// dmesgISO is `dmesg --time-format iso`'s stamp: a comma before the
// microseconds, and the message right after it.
func dmesgISO(t time.Time) string {
	return fmt.Sprintf("%s,%06d%s ", t.Format("2006-01-02T15:04:05"), t.Nanosecond()/1000, t.Format("-07:00"))
}

// skippedLines reads the receiver's kernel_log_lines_skipped counter by
// reason.
func skippedLines(t *testing.T, tt interface {
	GetMetric(string) (metricdata.Metrics, error)
}) map[string]int64 {
	out := map[string]int64{}
	m, err := tt.GetMetric("otelcol_receiver_dcgm_kernel_log_lines_skipped")
	if err != nil {
		return out
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok)
	for _, dp := range sum.DataPoints {
		reason, _ := dp.Attributes.Value("reason")
		out[reason.AsString()] += dp.Value
	}
	return out
}

// On an HGX node the GPU that falls off the bus is gone from NVML; the
// driver's "GPU at" line names it, and the NVSwitch SXids that follow stay
// events of their own: the XID 79 is never swallowed.
func TestXID79AndSXidsOnAnHGXNodeInDmesgISO(t *testing.T) {
	h, kern, _ := kernelLogReceiver(t)
	stamp := dmesgISO(time.Now().UTC())
	const lost = "GPU-7a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"
	appendLines(t, kern,
		stamp+"NVRM: GPU at PCI:0000:91:00: "+lost,
		stamp+"NVRM: GPU Board Serial Number: 1652922012345",
		stamp+"NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
		stamp+"NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.",
		stamp+"nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 32 LTSSM Fault Up",
		stamp+"nvidia-nvswitch3: SXid (PCI:0000:08:00.0): 20034, Fatal, Link 33 LTSSM Fault Up",
		stamp+"NVRM: GPU 0000:91:00.0: RmInitAdapter failed! (0x22:0x56:894)",
	)
	var got []healthRecord
	require.Eventually(t, func() bool {
		got = healthRecords(h.logs.AllLogs())
		return len(got) >= 4
	}, 30*time.Second, 10*time.Millisecond, "records %v", got)
	var summary []string
	for _, r := range got {
		summary = append(summary, r.event+" "+r.hwID+" "+r.bus+" "+r.state+" "+r.action)
	}
	assert.ElementsMatch(t, []string{
		accelschema.EventXID + " " + lost + " 0000:91:00.0 failed " + accelschema.ActionRebootNode,
		accelschema.EventNVSwitchError + "  0000:07:00.0 failed " + accelschema.ActionRebootNode,
		accelschema.EventNVSwitchError + "  0000:08:00.0 failed " + accelschema.ActionRebootNode,
		accelschema.EventKernelLogUnknown + " " + lost + " 0000:91:00.0 degraded " + accelschema.ActionInvestigate,
	}, summary)
}
