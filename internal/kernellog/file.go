package kernellog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/backoff"
)

// File reads a text kernel log (/var/log/kern.log, /var/log/messages, or a
// saved dmesg, dmesg -T or journalctl output): from its start the first
// time, then followed like `tail -F`: at its end it waits for more, a file
// replaced under the path (rotation) is read from its start, one cut
// shorter (truncation) from its start again. A restart resumes at the saved
// offset when the file is still the one the position names.
type File struct {
	Path string
	// Clock interprets the lines' time stamps (Stamper).
	Clock Clock
	// Poll is how often the end of the file is checked for more.
	Poll time.Duration
}

// Kind is "file".
func (f *File) Kind() string { return "file" }

// Run follows the file until ctx is done.
func (f *File) Run(ctx context.Context, from Position, have bool, emit func(Line), problem func(Problem)) {
	poll := f.Poll
	if poll <= 0 {
		poll = time.Second
	}
	var resume *Position
	if have && from.Path == f.Path {
		resume = &from
	}
	retry := backoff.New(poll, time.Minute)
	stamper := &Stamper{Clock: f.Clock}
	for ctx.Err() == nil {
		next, err := f.follow(ctx, resume, poll, stamper, emit, problem)
		resume = next
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			problem(Problem{Key: "open", Err: err, Missing: true})
			wait := retry.Failed(time.Now())
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			continue
		}
		retry.Succeeded()
	}
}

// follow reads one file (one inode) until it is replaced (nil error; the
// next one starts at 0), ctx is done, or it cannot be read.
func (f *File) follow(ctx context.Context, resume *Position, poll time.Duration, stamper *Stamper, emit func(Line), problem func(Problem)) (*Position, error) {
	file, err := os.Open(f.Path)
	if err != nil {
		return resume, fmt.Errorf("cannot open %s: %w (mount the host's log directory into the agent's pod, or set health.kernel_log.source: kmsg or journal)", f.Path, err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return resume, err
	}
	ino := inode(info)
	var offset int64
	if resume != nil && resume.Inode == ino && resume.Offset <= info.Size() {
		offset = resume.Offset
	}
	lineNo := 0
	if offset > 0 {
		lineNo = -1 // unknown: errors name the offset instead
	}
	// One reader for the file's life, and no read at all while the file
	// has not grown: a follower polls every second for a file that is
	// written a few times a day.
	lr := newLineReader(nil)
	for read := true; ; {
		if read {
			if _, err := file.Seek(offset, io.SeekStart); err != nil {
				return resume, err
			}
			lr.r.Reset(file)
			for {
				b, n, complete, err := lr.next()
				if errors.Is(err, errLineTooLong) {
					offset += int64(n)
					problem(Problem{Key: "too-long", Err: fmt.Errorf("%s at offset %d: %w", f.Path, offset-int64(n), err)})
					continue
				}
				if err != nil && !errors.Is(err, io.EOF) {
					return resume, fmt.Errorf("reading %s: %w", f.Path, err)
				}
				if !complete {
					break
				}
				offset += int64(n)
				if lineNo >= 0 {
					lineNo++
				}
				pos := Position{Source: "file", Path: f.Path, Inode: ino, Offset: offset}
				resume = &pos
				msg := text(b)
				// Every line goes through the stamper: dmesg -H's and
				// --time-format delta's stamps count from the line before.
				t, rest := stamper.Split(msg)
				if !relevant(rest) {
					emit(Line{Pos: pos})
					continue
				}
				where := f.Path + ":" + strconv.Itoa(lineNo)
				if lineNo < 0 {
					where = f.Path + " at offset " + strconv.FormatInt(offset-int64(n), 10)
				}
				emit(Line{Time: t, Text: rest, Pos: pos, Where: where})
			}
		}
		// At the end: wait, then see whether the path is still this file.
		select {
		case <-ctx.Done():
			return resume, nil
		case <-time.After(poll):
		}
		now, err := os.Stat(f.Path)
		read = true
		switch {
		case err != nil:
			// Rotated away and not yet recreated: keep reading what we have
			// until it appears.
			continue
		case inode(now) != ino:
			// Replaced: whatever was appended to the old file before the
			// rename has been read above; the new one starts at 0.
			return nil, nil
		case now.Size() < offset:
			offset, lineNo = 0, 0 // truncated in place
		case now.Size() == offset:
			read = false // nothing new
		}
	}
}
