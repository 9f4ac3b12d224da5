package kernellog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// A line's place in time, for the forms that write one: the wall time, the
// seconds since boot, and the seconds since the line before.
type stamp struct {
	wall        time.Time
	sinceBoot   time.Duration
	sincePrev   time.Duration
	first, kmsg bool
	seq         int
}

// lineForms are how the tools on a node write a kernel message: every dmesg
// time format with and without -x's facility and level, journalctl -k's
// outputs, syslog and /dev/kmsg. wantTime says whether the form gives the
// message's time to within resolution (dmesg's delta alone gives none: it
// counts from a line before that it does not date; -H dates the minute and
// counts from it).
const (
	undated = time.Duration(0)
	usec    = time.Microsecond
	second  = time.Second
	minute  = time.Minute
)

var lineForms = []struct {
	name       string
	format     func(s stamp, msg string) string
	resolution time.Duration
}{
	{"dmesg", func(s stamp, m string) string { return fmt.Sprintf("[%s] %s", secs(s.sinceBoot), m) }, usec},
	{"dmesg --time-format raw", func(s stamp, m string) string { return fmt.Sprintf("[%s] %s", secs(s.sinceBoot), m) }, usec},
	{"dmesg -r", func(s stamp, m string) string { return fmt.Sprintf("<4>[%s] %s", secs(s.sinceBoot), m) }, usec},
	{"dmesg -x", func(s stamp, m string) string { return fmt.Sprintf("kern  :warn  : [%s] %s", secs(s.sinceBoot), m) }, usec},
	{"dmesg -T", func(s stamp, m string) string { return fmt.Sprintf("[%s] %s", s.wall.Format(time.ANSIC), m) }, second},
	{"dmesg -T -x", func(s stamp, m string) string {
		return fmt.Sprintf("kern  :err   : [%s] %s", s.wall.Format(time.ANSIC), m)
	}, second},
	{"dmesg --time-format ctime", func(s stamp, m string) string { return fmt.Sprintf("[%s] %s", s.wall.Format(time.ANSIC), m) }, second},
	{"dmesg -H", reltime, minute},
	{"dmesg --time-format reltime -x", func(s stamp, m string) string { return "kern  :warn  : " + reltime(s, m) }, minute},
	{"dmesg --time-format delta", func(s stamp, m string) string { return fmt.Sprintf("[<%12.6f>] %s", s.sincePrev.Seconds(), m) }, undated},
	{"dmesg -d", func(s stamp, m string) string {
		return fmt.Sprintf("[%s <%12.6f>] %s", secs(s.sinceBoot), s.sincePrev.Seconds(), m)
	}, usec},
	{"dmesg --time-format notime", func(_ stamp, m string) string { return m }, undated},
	{"dmesg --time-format notime -x", func(_ stamp, m string) string { return "kern  :crit  : " + m }, undated},
	{"dmesg --time-format iso", func(s stamp, m string) string { return dmesgISO(s.wall) + " " + m }, usec},
	{"dmesg --time-format iso -x", func(s stamp, m string) string { return "kern  :warn  : " + dmesgISO(s.wall) + " " + m }, usec},
	{"journalctl -k (short)", func(s stamp, m string) string { return s.wall.Format("Jan 02 15:04:05") + " gpu-node-1 kernel: " + m }, second},
	{"journalctl -k -o short-precise", func(s stamp, m string) string {
		return s.wall.Format("Jan 02 15:04:05.000000") + " gpu-node-1 kernel: " + m
	}, usec},
	{"journalctl -k -o short-iso", func(s stamp, m string) string {
		return s.wall.Format("2006-01-02T15:04:05-07:00") + " gpu-node-1 kernel: " + m
	}, second},
	{"journalctl -k -o short-iso (systemd < 250)", func(s stamp, m string) string {
		return s.wall.Format("2006-01-02T15:04:05-0700") + " gpu-node-1 kernel: " + m
	}, second},
	{"journalctl -k -o short-iso-precise", func(s stamp, m string) string {
		return s.wall.Format("2006-01-02T15:04:05.000000-07:00") + " gpu-node-1 kernel: " + m
	}, usec},
	{"journalctl -k -o short-monotonic", func(s stamp, m string) string { return fmt.Sprintf("[%s] gpu-node-1 kernel: %s", secs(s.sinceBoot), m) }, usec},
	{"journalctl -k -o json", journalJSON, usec},
	{"syslog RFC 3164 (kern.log)", func(s stamp, m string) string {
		return s.wall.Format(time.Stamp) + " gpu-node-1 kernel: [" + secs(s.sinceBoot) + "] " + m
	}, second},
	{"syslog RFC 3164 with priority", func(s stamp, m string) string { return "<4>" + s.wall.Format(time.Stamp) + " gpu-node-1 kernel: " + m }, second},
	{"syslog RFC 3339 (rsyslog high precision)", func(s stamp, m string) string {
		return s.wall.Format("2006-01-02T15:04:05.000000-07:00") + " gpu-node-1 kernel: " + m
	}, usec},
	{"syslog RFC 5424", func(s stamp, m string) string {
		return "<4>1 " + s.wall.Format("2006-01-02T15:04:05.000000Z07:00") + " gpu-node-1 kernel - - - " + m
	}, usec},
	{"syslog RFC 5424 with structured data", func(s stamp, m string) string {
		return "<4>1 " + s.wall.Format("2006-01-02T15:04:05.000000Z07:00") + ` gpu-node-1 kernel - - [timeQuality tzKnown="1" isSynced="0"][origin x="a\]b"] ` + m
	}, usec},
	{"/dev/kmsg record", func(s stamp, m string) string {
		return fmt.Sprintf("4,%d,%d,-;%s", s.seq, s.sinceBoot.Microseconds(), m)
	}, usec},
}

func secs(d time.Duration) string {
	return fmt.Sprintf("%5d.%06d", int64(d/time.Second), (d % time.Second).Microseconds())
}

// dmesgISO is dmesg's iso format: a comma before the microseconds.
func dmesgISO(t time.Time) string {
	return t.Format("2006-01-02T15:04:05") + "," + fmt.Sprintf("%06d", t.Nanosecond()/1000) + t.Format("-07:00")
}

// reltime is dmesg -H: the minute in full when it changes, else the
// seconds since the line before.
func reltime(s stamp, m string) string {
	if s.first {
		return "[" + s.wall.Format("Jan02 15:04") + "] " + m
	}
	return fmt.Sprintf("[  %+8.6f] %s", s.sincePrev.Seconds(), m)
}

func journalJSON(s stamp, m string) string {
	b, _ := json.Marshal(map[string]string{
		"__CURSOR":             "s=1;i=" + strconv.Itoa(s.seq),
		"__REALTIME_TIMESTAMP": strconv.FormatInt(s.wall.UnixMicro(), 10),
		"_TRANSPORT":           "kernel",
		"PRIORITY":             "4",
		"MESSAGE":              m,
		"_HOSTNAME":            "gpu-node-1",
	})
	return string(b)
}

// TestEveryFormEveryHealthLine: each form × each health line, read by the
// source a node would use for it, makes the line's event, at its time where
// the form gives one; nothing is skipped and nothing goes wrong.
func TestEveryFormEveryHealthLine(t *testing.T) {
	boot := time.Date(2024, 11, 15, 11, 0, 0, 0, time.UTC)
	clock := Clock{Boot: boot, Now: func() time.Time { return time.Date(2024, 11, 16, 0, 0, 0, 0, time.UTC) }}
	for _, form := range lineForms {
		t.Run(form.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			var stamps []stamp
			since := 3723470068 * time.Microsecond // 1:02:03.470068 after boot
			for i, l := range formLines {
				gap := time.Duration(i) * 1500 * time.Microsecond
				s := stamp{wall: boot.Add(since + gap), sinceBoot: since + gap, sincePrev: 1500 * time.Microsecond, first: i == 0, seq: 100 + i}
				if i == 0 {
					s.sincePrev = 0
				}
				stamps = append(stamps, s)
				b.WriteString(form.format(s, l.text) + "\n")
			}
			path := filepath.Join(t.TempDir(), "kernel.log")
			require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
			var src Source = &File{Path: path, Clock: clock, Poll: 10 * time.Millisecond}
			if strings.HasPrefix(form.name, "/dev/kmsg") {
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
				if form.resolution != undated {
					assert.WithinDuration(t, stamps[i].wall, ev.Time, form.resolution, "event %d (%s) time", i, ev.Kind)
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
