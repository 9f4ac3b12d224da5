package kernellog

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kernlog"
)

// The health lines every form is tried with. Their text is the drivers' and
// the kernel's (see testdata/PROVENANCE.md for where each was seen).
var formLines = []struct {
	text string
	want string // summary of the event it must make
}{
	{"NVRM: Xid (PCI:0000:19:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 3, subpartition 0.", "xid:0000:19:00.0:48"},
	{"nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 32 LTSSM Fault Up", "sxid:0000:07:00.0:20034"},
	{"nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)", "pcie_aer:0000:03:00.0:0"},
	{"pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)", "pcie_aer:0000:00:03.0:0"},
	{"NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.", "fallen_off_bus:0000:91:00.0:0"},
	{"NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR instance-id=i-0592464924bd45322 hostname=ip-172-31-61-252 nd-id=0 nc-id=0 serial-num=19fcda00f5ff6eb9 action=TERMINATE_INSTANCE", "neuron_hw_error::0"},
}

// TestEveryFormEveryHealthLine: each form × each health line, read by the
// source a node would use for it, makes the line's event, at its time where
// the form gives one; nothing is skipped and nothing goes wrong.
func TestEveryFormEveryHealthLine(t *testing.T) {
	boot := time.Date(2024, 11, 15, 11, 0, 0, 0, time.UTC)
	clock := Clock{Boot: boot, Now: func() time.Time { return time.Date(2024, 11, 16, 0, 0, 0, 0, time.UTC) }}
	for _, form := range kernlog.Forms {
		t.Run(form.Name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			var stamps []kernlog.Stamp
			since := 3723470068 * time.Microsecond // 1:02:03.470068 after boot
			for i, l := range formLines {
				gap := time.Duration(i) * 1500 * time.Microsecond
				s := kernlog.Stamp{Wall: boot.Add(since + gap), SinceBoot: since + gap, SincePrev: 1500 * time.Microsecond, First: i == 0, Seq: 100 + i}
				if i == 0 {
					s.SincePrev = 0
				}
				stamps = append(stamps, s)
				b.WriteString(form.Render(s, l.text) + "\n")
			}
			path := filepath.Join(t.TempDir(), "kernel.log")
			require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
			var src Source = &File{Path: path, Clock: clock, Poll: 10 * time.Millisecond}
			if strings.HasPrefix(form.Name, "/dev/kmsg") {
				src = &Kmsg{Path: path, Clock: clock, Poll: 10 * time.Millisecond, BootIDPath: filepath.Join(t.TempDir(), "none")}
			}
			c := newCollector()
			var skipped skips
			stop := start(t, Settings{Source: src, Checkpoint: MemoryCheckpoint(), Handle: c.handle, Problem: c.problem, Skipped: skipped.add, Quiet: 20 * time.Millisecond})
			c.waitFor(t, "an event for each health line", func(e []Event, _ []Problem) bool { return len(e) >= len(formLines) })
			stop()
			var want []string
			for _, l := range formLines {
				want = append(want, l.want)
			}
			assert.Equal(t, want, summary(c.events), "file:\n%s", b.String())
			for i, ev := range c.events {
				if i >= len(stamps) {
					break
				}
				if form.Resolution != 0 {
					assert.WithinDuration(t, stamps[i].Wall, ev.Time, form.Resolution, "event %d (%s) time", i, ev.Kind)
				} else {
					assert.True(t, ev.Time.IsZero(), "event %d: this form dates nothing, got %v", i, ev.Time)
				}
			}
			assert.True(t, c.events[1].Fatal, "the SXid is fatal")
			assert.Equal(t, AERFatal, c.events[2].Severity, "the GPU could not recover")
			assert.Equal(t, AERFatal, c.events[3].Severity, "the port's fatal error")
			assert.Equal(t, "SRAM_UNCORRECTABLE_ERROR", c.events[5].NeuronError)
			assert.Empty(t, skipped.all(), "every line made its event")
			assert.Empty(t, c.problems)
		})
	}
}

// skips gathers what Run reports as skipped.
type skips struct {
	mu sync.Mutex
	s  []Skip
}

func (k *skips) add(s Skip) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.s = append(k.s, s)
}

func (k *skips) all() []Skip {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]Skip(nil), k.s...)
}

// The relative stamps of dmesg -H count from the line before, every line,
// not only the health lines among them.
func TestRelativeStampsCountEveryLine(t *testing.T) {
	now := func() time.Time { return time.Date(2024, 1, 22, 0, 0, 0, 0, time.UTC) }
	s := Stamper{Clock: Clock{Now: now}}
	for _, l := range []string{
		"[Jan21 10:39] usb 1-1: new high-speed USB device number 2 using xhci_hcd",
		"[  +2.500000] pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0",
		"[  +0.000004] pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)",
		"[ +12.000000] something else",
	} {
		s.Split(l)
	}
	got, msg := s.Split("[  +0.000921] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)")
	assert.Equal(t, time.Date(2024, 1, 21, 10, 39, 14, 500925000, time.UTC), got)
	assert.Equal(t, "nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)", msg)
}

// A prefix the reader does not know is left in the message, never taken
// for one: the message's own first word ("NVRM:", "nvidia", a PCI
// address) is no host or tag.
func TestPrefixesAreNeverTakenFromTheMessage(t *testing.T) {
	c := Clock{Now: func() time.Time { return time.Date(2024, 11, 16, 0, 0, 0, 0, time.UTC) }}
	for _, msg := range []string{
		"NVRM: Xid (PCI:0000:19:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error",
		"nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)",
		"snd_hda_intel 0000:03:00.1: AER: can't recover (no error_detected callback)",
		"pcieport 0000:00:03.0: AER: device recovery failed",
		"nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 32 LTSSM Fault Up",
	} {
		for _, prefix := range []string{"2024-11-15T12:02:03,470068+00:00 ", "[Nov15 12:02] ", "[  +0.000844] ", "[<    0.000844>] ", ""} {
			_, got := SplitPrefix(prefix+msg, c)
			assert.Equal(t, msg, got, "prefix %q", prefix)
		}
	}
}
