package kernellog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/otelcol-accel/otelcol-accel/internal/filestoragetest"
)

// collector runs Run over a source and gathers what it hands on.
type collector struct {
	mu       sync.Mutex
	events   []Event
	problems []Problem
	changed  chan struct{}
}

func newCollector() *collector { return &collector{changed: make(chan struct{}, 1)} }

func (c *collector) handle(e Event) {
	c.mu.Lock()
	c.events = append(c.events, e)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *collector) problem(p Problem) {
	c.mu.Lock()
	c.problems = append(c.problems, p)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// waitFor waits until cond holds over what was gathered. The deadline only
// keeps a broken test from hanging; nothing depends on how fast it is.
func (c *collector) waitFor(t *testing.T, what string, cond func(events []Event, problems []Problem) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		ok := cond(c.events, c.problems)
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-c.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			c.mu.Lock()
			defer c.mu.Unlock()
			t.Fatalf("waiting for %s: have %d events %v, problems %v", what, len(c.events), summary(c.events), c.problems)
		}
	}
}

func summary(events []Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = fmt.Sprintf("%s:%s:%d", e.Kind, e.Bus, e.Code)
	}
	return out
}

// start runs Run in the background; stop cancels it and waits.
func start(t *testing.T, s Settings) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, s) }()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

func startFileStorage(t *testing.T, dir string) storage.Client {
	t.Helper()
	ext, _ := filestoragetest.Start(t, dir)
	client, err := ext.(storage.Extension).GetClient(context.Background(), component.KindReceiver, component.MustNewID("dcgm"), "kernel_log")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, client.Close(context.Background())) })
	return client
}

// kmsgRecords writes /dev/kmsg records: an XID on its own bus for each seq
// in xids, an unrelated message otherwise, each with a dict line as the
// kernel adds for device messages.
func kmsgRecords(from, to uint64, xids map[uint64]bool) string {
	var b strings.Builder
	for seq := from; seq <= to; seq++ {
		if xids[seq] {
			fmt.Fprintf(&b, "4,%d,%d,-;NVRM: Xid (PCI:0000:%02x:00): 13, pid=%d, name=python, Graphics Exception: ESR\n SUBSYSTEM=pci\n DEVICE=+pci:0000:%02x:00.0\n", seq, seq*1000, seq, 100+seq, seq)
		} else {
			fmt.Fprintf(&b, "6,%d,%d,-;usb 1-1: new device %d\n", seq, seq*1000, seq)
		}
	}
	return b.String()
}

func xidBuses(events []Event) []string {
	var out []string
	for _, e := range events {
		if e.Kind == KindXID {
			out = append(out, e.Bus)
		}
	}
	return out
}

// A restart in the middle of /dev/kmsg: the second run hands on exactly the
// records after the first run's last, through the file_storage position.
func TestKmsgRestartNeitherRepeatsNorSkips(t *testing.T) {
	dir := t.TempDir()
	kmsg := filepath.Join(dir, "kmsg")
	bootID := filepath.Join(dir, "boot_id")
	require.NoError(t, os.WriteFile(bootID, []byte("442992fd-9cb9-4c3f-94c9-a1025dcf6563\n"), 0o600))
	xids := map[uint64]bool{2: true, 5: true, 6: true, 9: true, 12: true}
	require.NoError(t, os.WriteFile(kmsg, []byte(kmsgRecords(1, 6, xids)), 0o600))
	store := startFileStorage(t, filepath.Join(dir, "storage"))
	boot := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	src := &Kmsg{Path: kmsg, BootIDPath: bootID, Clock: Clock{Boot: boot}, Poll: 10 * time.Millisecond}

	first := newCollector()
	stop := start(t, Settings{Source: src, Checkpoint: StorageCheckpoint(store, "kmsg"), Handle: first.handle, Problem: first.problem, Quiet: 20 * time.Millisecond})
	first.waitFor(t, "the first three XIDs", func(e []Event, _ []Problem) bool { return len(e) == 3 })
	stop()
	assert.Equal(t, []string{"0000:02:00.0", "0000:05:00.0", "0000:06:00.0"}, xidBuses(first.events))
	assert.Equal(t, boot.Add(2*time.Millisecond), first.events[0].Time, "usec since boot")
	assert.Equal(t, 102, first.events[0].PID)

	// The kernel logs on while the agent is down.
	appendFile(t, kmsg, kmsgRecords(7, 12, xids))
	second := newCollector()
	stop = start(t, Settings{Source: src, Checkpoint: StorageCheckpoint(store, "kmsg"), Handle: second.handle, Problem: second.problem, Quiet: 20 * time.Millisecond})
	second.waitFor(t, "the XIDs after the restart", func(e []Event, _ []Problem) bool { return len(e) == 2 })
	stop()
	assert.Equal(t, []string{"0000:09:00.0", "0000:0c:00.0"}, xidBuses(second.events))
	assert.Empty(t, second.problems, "nothing was missed")

	// Down longer than the ring buffer holds: records 13 to 20 are gone
	// when it comes back, which is said once.
	require.NoError(t, os.WriteFile(kmsg, []byte(kmsgRecords(21, 24, map[uint64]bool{22: true})), 0o600))
	third := newCollector()
	stop = start(t, Settings{Source: src, Checkpoint: StorageCheckpoint(store, "kmsg"), Handle: third.handle, Problem: third.problem, Quiet: 20 * time.Millisecond})
	third.waitFor(t, "the XID after the gap", func(e []Event, _ []Problem) bool { return len(e) == 1 })
	stop()
	require.Len(t, third.problems, 1)
	assert.Equal(t, "missed", third.problems[0].Key)
	assert.Contains(t, third.problems[0].Err.Error(), "8 kernel log records were overwritten before they were read (sequence numbers 13 to 20)")

	// Another boot: its sequence numbers start over and are all read.
	require.NoError(t, os.WriteFile(bootID, []byte("0b7e2c11-0000-4000-8000-000000000001\n"), 0o600))
	require.NoError(t, os.WriteFile(kmsg, []byte(kmsgRecords(1, 3, map[uint64]bool{1: true})), 0o600))
	fourth := newCollector()
	stop = start(t, Settings{Source: src, Checkpoint: StorageCheckpoint(store, "kmsg"), Handle: fourth.handle, Problem: fourth.problem, Quiet: 20 * time.Millisecond})
	fourth.waitFor(t, "the new boot's XID", func(e []Event, _ []Problem) bool { return len(e) == 1 })
	stop()
	assert.Equal(t, []string{"0000:01:00.0"}, xidBuses(fourth.events))
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// The real /dev/kmsg of this machine, read only: records come with
// increasing sequence numbers and the reader hands on what matches (most
// machines have no XIDs; what is checked is that reading works and
// positions advance).
func TestKmsgReadsTheRealDevice(t *testing.T) {
	f, err := os.Open("/dev/kmsg")
	if err != nil {
		t.Skipf("no readable /dev/kmsg here: %v", err)
	}
	f.Close()
	var mu sync.Mutex
	var seqs []uint64
	src := &Kmsg{Clock: Clock{Boot: BootTime(time.Now())}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		src.Run(ctx, Position{}, false, func(l Line) {
			mu.Lock()
			seqs = append(seqs, l.Pos.Seq)
			n := len(seqs)
			mu.Unlock()
			if n >= 5 {
				cancel()
			}
		}, func(p Problem) { t.Logf("problem: %v", p.Err) })
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cancel()
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seqs) == 0 {
		t.Skip("/dev/kmsg opened but gave no records")
	}
	for i := 1; i < len(seqs); i++ {
		assert.Greater(t, seqs[i], seqs[i-1], "sequence numbers increase")
	}
}

// Every fixture, through the whole reader: each form becomes one event, the
// lines after it join it, and unknown XID codes are kept.
func TestFileFixtures(t *testing.T) {
	boot := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	now := func() time.Time { return time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC) }
	c := newCollector()
	src := &File{Path: "testdata/nvidia.dmesg", Clock: Clock{Boot: boot, Now: now}, Poll: 10 * time.Millisecond}
	stop := start(t, Settings{Source: src, Checkpoint: MemoryCheckpoint(), Handle: c.handle, Problem: c.problem, Quiet: 20 * time.Millisecond})
	c.waitFor(t, "every event of the fixture", func(e []Event, _ []Problem) bool { return len(e) == 15 })
	stop()
	got := summary(c.events)
	assert.Equal(t, []string{
		"gpu_at:0000:3b:00.0:0",
		"xid:0000:3b:00.0:79",
		"xid:0000:cb:00.0:13", "xid:0000:cb:00.0:13",
		"xid:0000:1b:00.0:31", "xid:0000:1b:00.0:48", "xid:0000:1b:00.0:63",
		"xid:0000:c1:00.0:119", "xid:0000:c1:00.0:154",
		"xid:0000:07:00.0:74",
		"sxid:0000:86:00.0:12028", "sxid:0000:84:00.0:24007",
		"pcie_aer:0000:3b:00.0:0", "pcie_aer:0000:cb:00.0:0",
		"xid:0000:1b:00.0:999",
	}, got)
	xid79 := c.events[1]
	assert.Equal(t, boot.Add(1843227921*time.Microsecond), xid79.Time)
	assert.Equal(t, 3341, xid79.PID)
	assert.Equal(t, "python3", xid79.Process)
	assert.Len(t, xid79.Lines, 5, "the XID, the driver's own fallen-off line and the crash-dump notice")
	assert.Len(t, c.events[7].Lines, 2, "XID 119 and its GSP RPC detail")
	assert.Len(t, c.events[10].Lines, 2, "the SXid and its second line")
	assert.True(t, c.events[11].Fatal)
	assert.Len(t, c.events[12].Lines, 4, "the port's report, the AER error and its register lines")
	assert.Equal(t, "0000:3a:00.0", c.events[12].Port, "the port that received the error")
	assert.Equal(t, "A code no catalogue has yet", c.events[14].Text)
	assert.Empty(t, c.problems)
}

func TestFileFixturesOfOldDriversAndSyslog(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC) }
	c := newCollector()
	src := &File{Path: "testdata/old-drivers.log", Clock: Clock{Now: now}, Poll: 10 * time.Millisecond}
	stop := start(t, Settings{Source: src, Checkpoint: MemoryCheckpoint(), Handle: c.handle, Problem: c.problem, Quiet: 20 * time.Millisecond})
	c.waitFor(t, "every event", func(e []Event, _ []Problem) bool { return len(e) == 7 })
	stop()
	assert.Equal(t, []string{
		"gpu_at:0000:01:00.0:0", "xid:0000:01:00.0:32", "xid:0000:01:00.0:69", "xid:0000:01:00.0:13",
		"xid:0000:09:00.0:53", "fallen_off_bus:0000:01:00.0:0", "xid:0000:01:00.0:3",
	}, summary(c.events))
	assert.Equal(t, time.Date(2026, 12, 23, 23, 30, 56, 0, time.UTC), c.events[1].Time, "syslog's wall time, not the boot-relative stamp")
	assert.Equal(t, time.Date(2026, 5, 6, 0, 38, 27, 0, time.UTC), c.events[3].Time)
}

func TestNeuronFixtureInDmesgT(t *testing.T) {
	c := newCollector()
	src := &File{Path: "testdata/neuron.dmesg-T", Clock: Clock{Now: func() time.Time { return time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC) }}, Poll: 10 * time.Millisecond}
	stop := start(t, Settings{Source: src, Checkpoint: MemoryCheckpoint(), Handle: c.handle, Problem: c.problem, Quiet: 20 * time.Millisecond})
	c.waitFor(t, "four Neuron errors", func(e []Event, _ []Problem) bool { return len(e) == 4 })
	stop()
	var kinds []string
	for _, e := range c.events {
		kinds = append(kinds, fmt.Sprintf("%s/%d/%d", e.NeuronError, e.Device, e.Core))
	}
	assert.Equal(t, []string{"SRAM_UNCORRECTABLE_ERROR/0/0", "HBM_UNCORRECTABLE_ERROR/3/-1", "DMA_ERROR/0/-1", "NC_UNCORRECTABLE_ERROR/5/11"}, kinds)
	assert.Equal(t, time.Date(2026, 12, 1, 21, 15, 2, 0, time.UTC), c.events[0].Time)
}

// A followed file: read from its start, then what is appended, then a
// rotated file from its start; a restart resumes at the saved offset.
func TestFileFollowsRotationAndResumes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kern.log")
	line := func(bus int) string {
		return fmt.Sprintf("Dec  1 23:42:%02d gpu-node-1 kernel: NVRM: Xid (PCI:0000:%02x:00): 43, pid=7, name=x, Ch 00000010\n", bus, bus)
	}
	require.NoError(t, os.WriteFile(path, []byte(line(1)+"Dec  1 23:42:01 gpu-node-1 kernel: eth0: link up\n"), 0o600))
	cp := MemoryCheckpoint()
	c := newCollector()
	src := &File{Path: path, Poll: 10 * time.Millisecond}
	stop := start(t, Settings{Source: src, Checkpoint: cp, Handle: c.handle, Problem: c.problem, Quiet: 20 * time.Millisecond})
	c.waitFor(t, "the first line", func(e []Event, _ []Problem) bool { return len(e) == 1 })
	appendFile(t, path, line(2))
	c.waitFor(t, "the appended line", func(e []Event, _ []Problem) bool { return len(e) == 2 })
	require.NoError(t, os.Rename(path, path+".1"))
	require.NoError(t, os.WriteFile(path, []byte(line(3)), 0o600))
	c.waitFor(t, "the rotated file's line", func(e []Event, _ []Problem) bool { return len(e) == 3 })
	stop()

	appendFile(t, path, line(4))
	again := newCollector()
	stop = start(t, Settings{Source: src, Checkpoint: cp, Handle: again.handle, Problem: again.problem, Quiet: 20 * time.Millisecond})
	again.waitFor(t, "the line written while stopped", func(e []Event, _ []Problem) bool { return len(e) == 1 })
	stop()
	assert.Equal(t, []string{"0000:01:00.0", "0000:02:00.0", "0000:03:00.0"}, xidBuses(c.events))
	assert.Equal(t, []string{"0000:04:00.0"}, xidBuses(again.events))
}

// Bad input: a binary blob, an over-long line and a truncated XID line are
// skipped with an error naming where; the lines around them are read.
func TestBadInputIsSkippedAndSaid(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dmesg")
	blob := make([]byte, 300)
	for i := range blob {
		blob[i] = byte(i)
		if blob[i] == '\n' {
			blob[i] = 0
		}
	}
	var b strings.Builder
	b.WriteString("[ 1.0] NVRM: Xid (PCI:0000:01:00): 13, pid=1, name=a, first\n")
	b.Write(blob)
	b.WriteString("\n[ 2.0] NVRM: Xid (PCI:0000:02:00\n")
	b.WriteString(strings.Repeat("NVRM", MaxLineBytes) + "\n")
	b.WriteString("[ 3.0] NVRM: Xid (PCI:0000:03:00): 13, pid=1, name=a, last\n")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	c := newCollector()
	stop := start(t, Settings{Source: &File{Path: path, Poll: 10 * time.Millisecond}, Checkpoint: MemoryCheckpoint(), Handle: c.handle, Problem: c.problem, Quiet: 20 * time.Millisecond})
	c.waitFor(t, "the lines around the bad ones", func(e []Event, _ []Problem) bool { return len(e) == 2 })
	stop()
	assert.Equal(t, []string{"0000:01:00.0", "0000:03:00.0"}, xidBuses(c.events))
	var keys []string
	for _, p := range c.problems {
		keys = append(keys, p.Key)
	}
	assert.ElementsMatch(t, []string{"parse", "too-long"}, keys)
	for _, p := range c.problems {
		if p.Key == "parse" {
			assert.Contains(t, p.Err.Error(), path+":3: malformed: XID line")
		}
	}
}

// The journal, through a journalctl that prints journald's JSON export (the
// real protocol), then one started again after the saved cursor.
func TestJournalResumesAfterItsCursor(t *testing.T) {
	dir := t.TempDir()
	fixture, err := filepath.Abs("testdata/journal.json")
	require.NoError(t, err)
	argsFile := filepath.Join(dir, "args")
	script := filepath.Join(dir, "journalctl")
	// Prints the fixture's entries after --after-cursor's, then waits like
	// --follow does; records its arguments.
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/sh
echo "$@" >> `+argsFile+`
after=""
for a in "$@"; do case "$a" in --after-cursor=*) after="${a#--after-cursor=}";; esac; done
if [ -z "$after" ]; then cat `+fixture+`; else awk -v c="$after" 'found{print} index($0, "\"" c "\""){found=1}' `+fixture+`; fi
exec sleep 600
`), 0o700))
	cp := MemoryCheckpoint()
	c := newCollector()
	stop := start(t, Settings{Source: &Journal{Command: script}, Checkpoint: cp, Handle: c.handle, Problem: c.problem, Quiet: 20 * time.Millisecond})
	c.waitFor(t, "both XIDs", func(e []Event, _ []Problem) bool { return len(e) == 2 })
	stop()
	assert.Equal(t, 94, c.events[0].Code)
	assert.Equal(t, time.UnixMicro(1796166001000000), c.events[0].Time)
	assert.Equal(t, 48, c.events[1].Code, "a MESSAGE given as bytes (not UTF-8) is read too")
	p, ok, err := cp.Load(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "s=1a2b;i=12;b=442992fd;m=3;t=5f3;x=ac", p.Cursor)

	again := newCollector()
	stop = start(t, Settings{Source: &Journal{Command: script}, Checkpoint: cp, Handle: again.handle, Problem: again.problem, Quiet: 20 * time.Millisecond})
	// Nothing after the cursor: wait until journalctl was asked for it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(argsFile)
		if strings.Count(string(b), "\n") == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	args, err := os.ReadFile(argsFile)
	require.NoError(t, err)
	calls := strings.Split(strings.TrimSpace(string(args)), "\n")
	require.Len(t, calls, 2)
	assert.Equal(t, "-k -o json --follow --no-pager --lines=all", calls[0])
	assert.Equal(t, "-k -o json --follow --no-pager --after-cursor=s=1a2b;i=12;b=442992fd;m=3;t=5f3;x=ac", calls[1])
	assert.Empty(t, again.events)
}

// A consumer that blocks never blocks the source: the backlog takes what it
// can, the rest is dropped and said, and reading goes on.
func TestFullBacklogDropsAndSays(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dmesg")
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "[ %d.0] NVRM: Xid (PCI:0000:%02x:00): 13, pid=1, name=a, flood\n", i, i%256)
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	release := make(chan struct{})
	c := newCollector()
	var once sync.Once
	handle := func(e Event) {
		once.Do(func() { <-release }) // the pipeline is stuck on the first event
		c.handle(e)
	}
	src := &countingSource{Source: &File{Path: path, Poll: 10 * time.Millisecond}, want: 200, reached: make(chan struct{})}
	stop := start(t, Settings{Source: src, Checkpoint: MemoryCheckpoint(), Handle: handle, Problem: c.problem, Backlog: 8, Quiet: 20 * time.Millisecond})
	<-src.reached // the source read the whole file while the consumer was stuck
	close(release)
	c.waitFor(t, "the drop to be said", func(_ []Event, p []Problem) bool {
		for _, x := range p {
			if x.Key == "dropped" {
				return true
			}
		}
		return false
	})
	stop()
	assert.Less(t, len(c.events), 200)
	assert.Contains(t, c.problems[0].Err.Error(), "kernel messages dropped: the backlog of 8 was full")
}

// countingSource says when its source has handed on want lines.
type countingSource struct {
	Source
	want    int
	n       int
	reached chan struct{}
}

func (c *countingSource) Run(ctx context.Context, from Position, have bool, emit func(Line), problem func(Problem)) {
	c.Source.Run(ctx, from, have, func(l Line) {
		emit(l)
		if c.n++; c.n == c.want {
			close(c.reached)
		}
	}, problem)
}
