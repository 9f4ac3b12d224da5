package kernellog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kernlog"
)

// readCapture runs a fixture through the whole reader (File, Run) and
// returns its events and what it reported as skipped, once every line has
// been read.
func readCapture(t *testing.T, path string, wantEvents int) ([]Event, []Skip) {
	t.Helper()
	clock := Clock{Boot: time.Date(2026, 1, 21, 10, 0, 0, 0, time.UTC), Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }}
	c := newCollector()
	var skipped skips
	src := &File{Path: path, Clock: clock, Poll: 10 * time.Millisecond}
	stop := start(t, Settings{Source: src, Checkpoint: MemoryCheckpoint(), Handle: c.handle, Problem: c.problem, Skipped: skipped.add, Quiet: 20 * time.Millisecond})
	c.waitFor(t, fmt.Sprintf("%d events of %s", wantEvents, path), func(e []Event, _ []Problem) bool { return len(e) >= wantEvents })
	stop() // flushes and hands on what the reader held
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.Empty(t, c.problems)
	return append([]Event(nil), c.events...), skipped.all()
}

// accounted checks that every line of the fixture that carries a marker is
// in exactly one event or one skip: nothing read is lost.
func accounted(t *testing.T, path string, events []Event, skipped []Skip) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var want, got int
	for l := range strings.SplitSeq(strings.TrimRight(string(b), "\n"), "\n") {
		if relevant(l) {
			want++
		}
	}
	for _, e := range events {
		got += len(e.Lines)
	}
	got += len(skipped)
	assert.Equal(t, want, got, "lines with a driver's marker in %s: every one in an event or counted as skipped", path)
}

func TestRealCaptureFatalAEROnTheRootPort(t *testing.T) {
	path := "testdata/aer-fatal-root-port.dmesg-H"
	events, skipped := readCapture(t, path, 6)
	assert.Equal(t, []string{
		"pcie_aer:0000:03:00.0:0", "pcie_aer:0000:03:00.1:0", "pcie_aer:0000:00:03.0:0",
		"pcie_aer:0000:00:03.0:0",
		"pcie_aer:0000:03:00.0:0", "pcie_aer:0000:03:00.1:0",
	}, summary(events)[:6])
	for _, e := range events {
		assert.Equal(t, AERFatal, e.Severity, "%s: %s", e.Bus, e.Text)
	}
	port := events[3]
	assert.Len(t, port.Lines, 2, "the port's report and its PCIe Bus Error line")
	assert.Contains(t, port.Text, "type=Transaction Layer", "the error type is evidence")
	// The link reset after the error reports no fault by itself; it is
	// counted, with where it was, not dropped.
	require.NotEmpty(t, skipped)
	assert.Equal(t, SkipInformational, skipped[0].Reason)
	assert.Contains(t, skipped[0].Text, "Root Port link has been reset")
	assert.Contains(t, skipped[0].Where, "aer-fatal-root-port.dmesg-H:11")
	accounted(t, path, events, skipped)
}

func TestRealCaptureFallenOffTheBusWithoutAnXID(t *testing.T) {
	path := "testdata/fallen-off-without-xid.dmesg"
	events, skipped := readCapture(t, path, 1)
	require.Len(t, events, 1)
	lost := events[0]
	assert.Equal(t, KindFallenOffBus, lost.Kind, "the three lines are one report of a lost GPU")
	assert.Equal(t, "0000:b3:00.0", lost.Bus, "the bus id is on the first of the three lines")
	assert.Len(t, lost.Lines, 5, "and the driver's lines after it (the failed probe, the module loading) are its detail")
	assert.Contains(t, lost.Lines[3], "probe routine failed")
	assert.Empty(t, skipped)
	accounted(t, path, events, skipped)
}

func TestRealCaptureXID79UnderALocalizedJournal(t *testing.T) {
	path := "testdata/xid79-localized.journal"
	events, skipped := readCapture(t, path, 2)
	assert.Equal(t, []string{"gpu_at:0000:01:00.0:0", "xid:0000:01:00.0:79"}, summary(events))
	assert.Equal(t, "GPU-b30686fb-50e5-b296-a563-b7746cd0b24a", events[0].UUID)
	assert.Equal(t, 6755, events[1].PID)
	assert.Len(t, events[1].Lines, 8, "the XID and the driver's lines after it")
	require.Len(t, skipped, 1, "the board's serial number, before the XID")
	assert.Contains(t, skipped[0].Text, "GPU Board Serial Number")
	accounted(t, path, events, skipped)
}

func TestRealCaptureGPUThatCannotInitialise(t *testing.T) {
	path := "testdata/rminitadapter.dmesg"
	events, skipped := readCapture(t, path, 1)
	require.Len(t, events, 1)
	assert.Equal(t, KindUnknown, events[0].Kind)
	assert.Equal(t, "0000:01:00.0", events[0].Bus)
	assert.Len(t, events[0].Lines, 4)
	accounted(t, path, events, skipped)
}

func TestRealCaptureGSPCrashInSyslogWithoutHost(t *testing.T) {
	path := "testdata/gsp-xid62.log"
	events, skipped := readCapture(t, path, 3)
	assert.Equal(t, []string{"xid:0000:01:00.0:62", "xid:0000:01:00.0:154", "xid:0000:01:00.0:45"}, summary(events))
	assert.Equal(t, time.Date(2026, 3, 27, 17, 40, 36, 0, time.UTC), events[0].Time)
	assert.Equal(t, "VLLM::Worker", events[2].Process)
	accounted(t, path, events, skipped)
}

func TestRealCaptureKernel6WordingOnDevicesThatAreNoGPU(t *testing.T) {
	path := "testdata/aer-nonfatal-not-a-gpu.log"
	events, skipped := readCapture(t, path, 4)
	// The reader reports every PCIe error; whether a device is an
	// accelerator's is for the receiver, which knows the node's devices.
	assert.Equal(t, []string{"pcie_aer:0000:97:00.0:0", "pcie_aer:0000:80:1b.4:0", "pcie_aer:0000:80:1b.4:0", "pcie_aer:0000:80:1b.4:0"}, summary(events))
	assert.Equal(t, AERCorrected, events[2].Severity)
	assert.Equal(t, AERNonFatal, events[3].Severity)
	assert.Len(t, events[3].Lines, 3, "received, PCIe Bus Error, TLP header")
	accounted(t, path, events, skipped)
}

// An XID and the SXids of the switches it crossed, arriving together on an
// HGX node, stay events of their own, and the GPU-at line names the GPU even
// with other NVRM lines before the XID.
func TestXIDAndSXidsOnAnHGXNodeStayApart(t *testing.T) {
	lines := []string{
		"NVRM: GPU at PCI:0000:91:00: GPU-1d2e3f40-5a6b-7c8d-9e0f-a1b2c3d4e5f6",
		"NVRM: GPU Board Serial Number: 1652922012345",
		"NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
		"NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.",
		"nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 32 LTSSM Fault Up",
		"nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Severity 1 Engine instance 32 Sub-engine instance 00",
		"nvidia-nvswitch3: SXid (PCI:0000:08:00.0): 20034, Fatal, Link 33 LTSSM Fault Up",
	}
	for _, form := range []string{"dmesg --time-format iso", "dmesg -x", "journalctl -k -o short-iso-precise", "/dev/kmsg record"} {
		t.Run(form, func(t *testing.T) {
			var format func(kernlog.Stamp, string) string
			for _, f := range kernlog.Forms {
				if f.Name == form {
					format = f.Render
				}
			}
			require.NotNil(t, format)
			boot := time.Date(2026, 1, 21, 10, 0, 0, 0, time.UTC)
			var b strings.Builder
			for i, l := range lines {
				d := time.Hour + time.Duration(i)*time.Millisecond
				b.WriteString(format(kernlog.Stamp{Wall: boot.Add(d), SinceBoot: d, SincePrev: time.Millisecond, Seq: i + 1}, l) + "\n")
			}
			path := filepath.Join(t.TempDir(), "hgx.log")
			require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
			events, skipped := readCapture(t, path, 4)
			assert.Equal(t, []string{"gpu_at:0000:91:00.0:0", "xid:0000:91:00.0:79", "sxid:0000:07:00.0:20034", "sxid:0000:08:00.0:20034"}, summary(events))
			assert.Len(t, events[1].Lines, 2, "the XID and the driver's own fallen-off line")
			assert.Len(t, events[2].Lines, 2, "the SXid and its second line")
			assert.Len(t, skipped, 1, "the serial number")
		})
	}
}

// /dev/kmsg escapes a record's newlines: r570's three-line report is one
// record there, and one message in the journal.
func TestMultiLineRecordFromKmsgAndJournal(t *testing.T) {
	msg := "NVRM: The NVIDIA GPU 0000:b3:00.0\nNVRM: (PCI ID: 10de:26b5) installed in this system has\nNVRM: fallen off the bus and is not responding to commands."
	dir := t.TempDir()
	kmsg := filepath.Join(dir, "kmsg")
	require.NoError(t, os.WriteFile(kmsg, []byte("3,7,1843308145,-;"+strings.ReplaceAll(msg, "\n", `\x0a`)+"\n"), 0o600))
	c := newCollector()
	stop := start(t, Settings{Source: &Kmsg{Path: kmsg, Poll: 10 * time.Millisecond, BootIDPath: filepath.Join(dir, "none")}, Checkpoint: MemoryCheckpoint(), Handle: c.handle, Quiet: 20 * time.Millisecond})
	c.waitFor(t, "the lost GPU", func(e []Event, _ []Problem) bool { return len(e) == 1 })
	stop()
	assert.Equal(t, []string{"fallen_off_bus:0000:b3:00.0:0"}, summary(c.events))

	m, err := Parse(msg) // the journal's MESSAGE keeps the newlines
	require.NoError(t, err)
	assert.Equal(t, KindFallenOffBus, m.Kind)
	assert.Equal(t, "0000:b3:00.0", m.Bus)
}
