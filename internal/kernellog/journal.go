package kernellog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/backoff"
)

// Journal reads the systemd journal's kernel messages through journalctl's
// JSON export (`journalctl -k -o json --follow`), the journal's documented
// interface; -k is this boot's kernel messages. The first run reads them
// all; a restart resumes after the saved cursor (--after-cursor). A
// journalctl that exits is started again, after the last cursor read.
type Journal struct {
	// Command is journalctl's path or name on PATH; "journalctl" unless
	// set. In a container, the host's journal directory is passed with
	// Args (--directory=/var/log/journal).
	Command string
	Args    []string
	// Restart paces restarts of a journalctl that exits.
	Restart time.Duration
}

// Kind is "journal".
func (j *Journal) Kind() string { return "journal" }

// Run runs journalctl until ctx is done.
func (j *Journal) Run(ctx context.Context, from Position, have bool, emit func(Line), problem func(Problem)) {
	cursor := ""
	if have {
		cursor = from.Cursor
	}
	wait := j.Restart
	if wait <= 0 {
		wait = time.Second
	}
	retry := backoff.New(wait, time.Minute)
	for ctx.Err() == nil {
		started := time.Now()
		err := j.once(ctx, &cursor, emit, problem)
		if ctx.Err() != nil {
			return
		}
		if time.Since(started) > time.Minute {
			retry.Succeeded()
		}
		problem(Problem{Key: "exit", Err: err, Missing: true})
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry.Failed(time.Now())):
		}
	}
}

func (j *Journal) once(ctx context.Context, cursor *string, emit func(Line), problem func(Problem)) error {
	command := j.Command
	if command == "" {
		command = "journalctl"
	}
	args := append([]string{"-k", "-o", "json", "--follow", "--no-pager"}, j.Args...)
	if *cursor != "" {
		args = append(args, "--after-cursor="+*cursor)
	} else {
		args = append(args, "--lines=all")
	}
	cmd := exec.CommandContext(ctx, command, args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot run %s: %w (install systemd's journalctl in the agent's image and mount the host's /var/log/journal, or set health.kernel_log.source: kmsg or file)", command, err)
	}
	lr := newLineReader(out)
	entries := 0
	for {
		b, n, complete, err := lr.next()
		if errors.Is(err, errLineTooLong) {
			problem(Problem{Key: "too-long", Err: fmt.Errorf("%s: an entry of more than %d bytes skipped", command, n)})
			continue
		}
		if err != nil || !complete {
			if err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
				problem(Problem{Key: "read", Err: fmt.Errorf("reading %s: %w", command, err)})
			}
			break
		}
		entries++
		e, ok := decodeJournalEntry(b)
		if !ok {
			problem(Problem{Key: "entry", Err: fmt.Errorf("%s: entry %d is not journal JSON, skipped: %q", command, entries, clip(text(b)))})
			continue
		}
		pos := Position{Source: "journal", Cursor: e.cursor}
		if e.cursor != "" {
			*cursor = e.cursor
		}
		if !relevant(e.message) {
			emit(Line{Pos: pos})
			continue
		}
		emit(Line{Time: e.time, Text: e.message, Pos: pos, Where: "journal entry " + clip(e.cursor)})
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return nil
	}
	if msg := stderr.String(); msg != "" {
		return fmt.Errorf("%s exited (%v): %s", command, werr, msg)
	}
	return fmt.Errorf("%s exited (%v)", command, werr)
}

type journalEntry struct {
	cursor, message string
	time            time.Time
}

// decodeJournalEntry reads one line of `journalctl -o json`. MESSAGE is a
// string, or an array of bytes when it is not valid UTF-8 (journald's JSON
// format); __REALTIME_TIMESTAMP is microseconds since the epoch, as a
// string.
func decodeJournalEntry(b []byte) (journalEntry, bool) {
	var raw struct {
		Cursor   string          `json:"__CURSOR"`
		Realtime string          `json:"__REALTIME_TIMESTAMP"`
		Message  json.RawMessage `json:"MESSAGE"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return journalEntry{}, false
	}
	e := journalEntry{cursor: raw.Cursor}
	if us, err := strconv.ParseInt(raw.Realtime, 10, 64); err == nil && us > 0 {
		e.time = time.UnixMicro(us)
	}
	var s string
	switch {
	case len(raw.Message) == 0 || string(raw.Message) == "null":
	case json.Unmarshal(raw.Message, &s) == nil:
		e.message = text([]byte(s))
	default:
		var ints []int
		if json.Unmarshal(raw.Message, &ints) != nil {
			return journalEntry{}, false
		}
		buf := make([]byte, 0, len(ints))
		for _, v := range ints {
			buf = append(buf, byte(v))
		}
		e.message = text(buf)
	}
	return e, true
}

// limitedBuffer keeps the first 4 KiB of a child's stderr for its exit
// message.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 4096 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
