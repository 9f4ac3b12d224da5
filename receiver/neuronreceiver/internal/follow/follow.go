// Package follow reads neuron-monitor's output from a file or a FIFO that
// another container writes, for as long as the collector runs.
//
// A FIFO is opened read-write: the receiver then holds a write end itself,
// so the stream does not end when neuron-monitor restarts and reopens it,
// and reads simply wait for the next report. A regular file is followed like
// `tail -F`: reading starts at its end (history would be replayed with the
// wrong timestamps), waits for more at EOF, and starts over at the
// beginning of a new file when the path is rotated or the file truncated.
// Each file (or each opening of the FIFO) is one stream for the consumer.
package follow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Stream describes one opened file for the consumer.
type Stream struct {
	Path string
	// MidLine is true when reading starts at an arbitrary offset (the end
	// of an existing file), so the first line may be the tail of a report.
	MidLine bool
	// Offset is where reading starts.
	Offset int64
}

// EventKind says what happened to the path.
type EventKind int

const (
	// Opened: the path is being read.
	Opened EventKind = iota + 1
	// Missing: the path does not exist (yet); it is looked for again.
	Missing
	// Failed: the path exists but cannot be read.
	Failed
	// Rotated: the file was replaced or truncated; the new one is read from
	// its start.
	Rotated
)

// Event is a change in what is being read.
type Event struct {
	Kind EventKind
	Path string
	Err  error
}

// Hooks receive the streams and events. Consume must read until EOF or an
// error.
type Hooks struct {
	Consume func(s Stream, r io.Reader)
	Event   func(Event)
}

// Follower follows one path.
type Follower struct {
	path  string
	poll  time.Duration
	hooks Hooks
}

// New returns a Follower that checks for new data, rotation and a missing
// path every poll.
func New(path string, poll time.Duration, hooks Hooks) *Follower {
	if hooks.Event == nil {
		hooks.Event = func(Event) {}
	}
	return &Follower{path: path, poll: poll, hooks: hooks}
}

// Run follows the path until ctx is done.
func (f *Follower) Run(ctx context.Context) {
	first := true
	for ctx.Err() == nil {
		fi, err := os.Stat(f.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			f.hooks.Event(Event{Kind: Missing, Path: f.path, Err: err})
		case err != nil:
			f.hooks.Event(Event{Kind: Failed, Path: f.path, Err: err})
		case fi.Mode()&fs.ModeNamedPipe != 0:
			f.followFIFO(ctx)
		case fi.Mode().IsRegular():
			f.followFile(ctx, first)
			first = false
		default:
			f.hooks.Event(Event{Kind: Failed, Path: f.path, Err: fmt.Errorf("%s is neither a regular file nor a FIFO (%s)", f.path, fi.Mode().Type())})
		}
		if !sleep(ctx, f.poll) {
			return
		}
	}
}

func (f *Follower) followFIFO(ctx context.Context) {
	// O_RDWR never blocks on open and never sees EOF when writers come and
	// go (Linux semantics). The file is pollable, so Close unblocks Read.
	file, err := os.OpenFile(f.path, os.O_RDWR, 0)
	if err != nil {
		f.hooks.Event(Event{Kind: Failed, Path: f.path, Err: err})
		return
	}
	f.hooks.Event(Event{Kind: Opened, Path: f.path})
	stop := context.AfterFunc(ctx, func() { file.Close() })
	defer stop()
	f.hooks.Consume(Stream{Path: f.path}, file)
	file.Close()
}

func (f *Follower) followFile(ctx context.Context, atEnd bool) {
	file, err := os.Open(f.path)
	if err != nil {
		f.hooks.Event(Event{Kind: Failed, Path: f.path, Err: err})
		return
	}
	defer file.Close()
	s := Stream{Path: f.path}
	if atEnd {
		if s.Offset, err = file.Seek(0, io.SeekEnd); err != nil {
			f.hooks.Event(Event{Kind: Failed, Path: f.path, Err: err})
			return
		}
		s.MidLine = s.Offset > 0 && !endsWithNewline(file, s.Offset)
	}
	f.hooks.Event(Event{Kind: Opened, Path: f.path})
	t := &tail{ctx: ctx, f: f, file: file, offset: s.Offset}
	t.fi, _ = file.Stat()
	f.hooks.Consume(s, t)
	if t.rotated {
		f.hooks.Event(Event{Kind: Rotated, Path: f.path})
	}
}

func endsWithNewline(file *os.File, size int64) bool {
	b := make([]byte, 1)
	_, err := file.ReadAt(b, size-1)
	return err == nil && b[0] == '\n'
}

// tail reads a growing file; at EOF it waits for more, and it ends the
// stream (io.EOF) once the path points at another file or the file shrank.
type tail struct {
	ctx     context.Context
	f       *Follower
	file    *os.File
	offset  int64
	rotated bool
	fi      os.FileInfo
}

func (t *tail) Read(p []byte) (int, error) {
	for {
		n, err := t.file.Read(p)
		t.offset += int64(n)
		if n > 0 {
			return n, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if t.replaced() {
			t.rotated = true
			return 0, io.EOF
		}
		if !sleep(t.ctx, t.f.poll) {
			return 0, t.ctx.Err()
		}
	}
}

// replaced reports whether the path now names another file, or the open
// file was truncated below what has been read.
func (t *tail) replaced() bool {
	cur, err := os.Stat(t.f.path)
	if err != nil {
		// Rotated away and not recreated yet: keep reading the old file,
		// which the writer may still append to.
		return false
	}
	if t.fi != nil && !os.SameFile(t.fi, cur) {
		return true
	}
	open, err := t.file.Stat()
	return err == nil && open.Size() < t.offset
}

func sleep(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}
