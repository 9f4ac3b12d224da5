package output

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// Lines writes one event per line (JSON lines), for stdout pickup (Lambda,
// containers whose stdout Fluent Bit ships) or a file the CloudWatch agent
// tails. Log group and stream are not written: the agent's or Fluent Bit's
// own configuration decides them.
type Lines struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte

	// File output only.
	path       string
	maxBytes   int64
	maxBackups int
	f          *os.File
	size       int64
}

// NewStdout writes to w (os.Stdout in the collector).
func NewStdout(w io.Writer) *Lines { return &Lines{w: w} }

// NewFile appends to path. With maxBytes > 0 the file is rotated before a
// write would take it past maxBytes: path becomes path.1, path.1 becomes
// path.2, … and the oldest beyond maxBackups (at least 1) is removed, the
// scheme the CloudWatch agent and Fluent Bit follow. With maxBytes == 0 the
// file is only ever appended to (rotate it with logrotate's copytruncate, or
// not at all).
func NewFile(path string, maxBytes int64, maxBackups int) *Lines {
	return &Lines{path: path, maxBytes: maxBytes, maxBackups: maxBackups}
}

// Start opens the file, so a path that cannot be written fails the
// collector's start.
func (l *Lines) Start(context.Context, component.Host) error {
	if l.path == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open()
}

func (l *Lines) open() error {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("opening output file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("opening output file: %w", err)
	}
	l.f, l.w, l.size = f, f, st.Size()
	return nil
}

// Shutdown closes the file.
func (l *Lines) Shutdown(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f, l.w = nil, nil
	return err
}

// Send writes the events in order, one line each. On a write error the
// events not yet written are returned for retry.
func (l *Lines) Send(_ context.Context, events []Event, _ bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		if err := l.open(); err != nil {
			return &FailedError{Origins: failedOf(events, nil), Err: err}
		}
	}
	start := 0
	l.buf = l.buf[:0]
	for i, e := range events {
		n := int64(len(e.Message) + 1)
		pending := l.size + int64(len(l.buf))
		if l.f != nil && l.maxBytes > 0 && pending+n > l.maxBytes && pending > 0 {
			if err := l.flush(); err != nil {
				return &FailedError{Origins: failedOf(events[start:], nil), Err: err}
			}
			start = i
			if err := l.rotate(); err != nil {
				return &FailedError{Origins: failedOf(events[start:], nil), Err: err}
			}
		}
		l.buf = append(l.buf, e.Message...)
		l.buf = append(l.buf, '\n')
	}
	if err := l.flush(); err != nil {
		return &FailedError{Origins: failedOf(events[start:], nil), Err: err}
	}
	return nil
}

func (l *Lines) flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	n, err := l.w.Write(l.buf)
	l.size += int64(n)
	l.buf = l.buf[:0]
	if err != nil {
		return fmt.Errorf("writing %s: %w", l.name(), err)
	}
	return nil
}

func (l *Lines) name() string {
	if l.path == "" {
		return "stdout"
	}
	return l.path
}

func (l *Lines) rotate() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("rotating %s: %w", l.path, err)
	}
	l.f, l.w = nil, nil
	backup := func(i int) string { return l.path + "." + strconv.Itoa(i) }
	keep := max(1, l.maxBackups)
	_ = os.Remove(backup(keep))
	for i := keep - 1; i >= 1; i-- {
		if err := os.Rename(backup(i), backup(i+1)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("rotating %s: %w", l.path, err)
		}
	}
	if err := os.Rename(l.path, backup(1)); err != nil {
		return fmt.Errorf("rotating %s: %w", l.path, err)
	}
	return l.open()
}
