package kernellog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/backoff"
)

// Kmsg reads /dev/kmsg: one record per read, "prio,seq,usec,flags;text"
// followed by " KEY=value" dict lines. A regular file holding `cat
// /dev/kmsg` output is read the same way (and followed), which is how the
// tests and the simulator use it.
type Kmsg struct {
	// Path is /dev/kmsg unless set.
	Path string
	// BootIDPath is /proc/sys/kernel/random/boot_id unless set: sequence
	// numbers start over at each boot, so a saved position is only good for
	// the boot that wrote it.
	BootIDPath string
	// Clock gives the boot time that the records' microseconds count from.
	Clock Clock
	// Poll is how often a regular file is checked for more at its end, and
	// how soon a missing path is looked for again (doubling up to a minute).
	Poll time.Duration
}

// Kind is "kmsg".
func (k *Kmsg) Kind() string { return "kmsg" }

// Run reads records after from.Seq when from is of the current boot, else
// the whole ring buffer.
func (k *Kmsg) Run(ctx context.Context, from Position, have bool, emit func(Line), problem func(Problem)) {
	path := k.Path
	if path == "" {
		path = "/dev/kmsg"
	}
	poll := k.Poll
	if poll <= 0 {
		poll = time.Second
	}
	boot := readBootID(k.BootIDPath)
	last, resume := uint64(0), false
	if have && from.BootID == boot && boot != "" {
		last, resume = from.Seq, true
	}
	retry := backoff.New(poll, time.Minute)
	for ctx.Err() == nil {
		err := k.read(ctx, path, boot, &last, &resume, poll, emit, problem)
		if err == nil || ctx.Err() != nil {
			return
		}
		problem(Problem{Key: "open", Err: err, Missing: true})
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry.Failed(time.Now())):
		}
	}
}

// read reads path until ctx is done (nil) or it cannot be read (the error).
// last is the last sequence number handed on; resume says that records up
// to it were handed on before (by this run or an earlier one).
func (k *Kmsg) read(ctx context.Context, path, boot string, last *uint64, resume *bool, poll time.Duration, emit func(Line), problem func(Problem)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot open %s: %w (mount the host's /dev/kmsg read-only into the agent's pod and run its container privileged, as the shipped DaemonSets do, or set health.kernel_log.source: journal or file)", path, err)
	}
	stop := context.AfterFunc(ctx, func() { f.Close() }) // unblocks a read of /dev/kmsg
	defer func() {
		if stop() {
			f.Close()
		}
	}()
	info, err := f.Stat()
	regular := err == nil && info.Mode().IsRegular()
	lr := newLineReader(f)
	var offset int64
	for {
		b, n, complete, err := lr.next()
		switch {
		case errors.Is(err, errLineTooLong):
			offset += int64(n)
			problem(Problem{Key: "too-long", Err: fmt.Errorf("%s: %w", path, err)})
			continue
		case errors.Is(err, syscall.EPIPE):
			// The kernel overwrote records we had not read; the next read
			// gives the oldest left. The gap in sequence numbers says how
			// many.
			continue
		case err != nil && !errors.Is(err, io.EOF):
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("reading %s: %w", path, err)
		case !complete:
			// End of a regular file: wait for more, from the same place.
			if !regular {
				return fmt.Errorf("%s ended", path) // a FIFO whose writer left: opened again
			}
			if _, err := f.Seek(offset, io.SeekStart); err != nil {
				return err
			}
			lr = newLineReader(f)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(poll):
			}
			continue
		}
		offset += int64(n)
		if len(b) == 0 || b[0] == ' ' {
			continue // a dict line (" SUBSYSTEM=pci") or blank
		}
		rec, ok := parseKmsgRecord(b)
		if !ok {
			problem(Problem{Key: "record", Err: fmt.Errorf("%s: a record without its \"prio,seq,usec,flags;\" header skipped: %q", path, clip(text(b)))})
			continue
		}
		if *resume && rec.seq <= *last {
			continue // handed on before the restart
		}
		if *resume && rec.seq > *last+1 {
			problem(Problem{Key: "missed", Err: fmt.Errorf("%s: %d kernel log records were overwritten before they were read (sequence numbers %d to %d); XIDs among them are lost", path, rec.seq-*last-1, *last+1, rec.seq-1)})
		}
		*last, *resume = rec.seq, true
		pos := Position{Source: "kmsg", BootID: boot, Seq: rec.seq}
		// The kernel escapes a message's newlines as \x0a: r570's three-line
		// "The NVIDIA GPU … has fallen off the bus" is one record.
		msg := strings.ReplaceAll(text(rec.text), `\x0a`, "\n")
		if !relevant(msg) {
			emit(Line{Pos: pos})
			continue
		}
		var t time.Time
		if !k.Clock.Boot.IsZero() {
			t = k.Clock.Boot.Add(time.Duration(rec.usec) * time.Microsecond)
		}
		emit(Line{Time: t, Text: msg, Pos: pos, Where: path + " seq " + strconv.FormatUint(rec.seq, 10)})
	}
}

type kmsgRecord struct {
	seq, usec uint64
	text      []byte
}

// parseKmsgRecord reads "6,1234,5678901,-;text" (later fields before ";"
// are ignored, as the kernel's documentation asks). Text escapes
// unprintable bytes as \xNN; they are left escaped.
func parseKmsgRecord(b []byte) (kmsgRecord, bool) {
	semi := -1
	for i, c := range b {
		if c == ';' {
			semi = i
			break
		}
	}
	if semi < 0 {
		return kmsgRecord{}, false
	}
	f := strings.SplitN(string(b[:semi]), ",", 5)
	if len(f) < 4 {
		return kmsgRecord{}, false
	}
	if _, err := strconv.ParseUint(f[0], 10, 16); err != nil {
		return kmsgRecord{}, false
	}
	seq, err1 := strconv.ParseUint(f[1], 10, 64)
	usec, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return kmsgRecord{}, false
	}
	return kmsgRecord{seq: seq, usec: usec, text: b[semi+1:]}, true
}

func readBootID(path string) string {
	if path == "" {
		path = "/proc/sys/kernel/random/boot_id"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// BootTime is when this host booted, from /proc/uptime: the zero of
// /dev/kmsg's and dmesg's stamps. (Uptime counts time suspended and the
// kernel's stamps do not; servers are not suspended.)
func BootTime(now time.Time) time.Time {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Time{}
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return time.Time{}
	}
	secs, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return time.Time{}
	}
	return now.Add(-time.Duration(secs * float64(time.Second)))
}
