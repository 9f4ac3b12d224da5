//go:build linux

package follow

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type lines struct {
	mu      sync.Mutex
	got     []string
	streams []Stream
	events  []EventKind
}

func (l *lines) hooks() Hooks {
	return Hooks{
		Consume: func(s Stream, r io.Reader) {
			l.mu.Lock()
			l.streams = append(l.streams, s)
			l.mu.Unlock()
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				l.mu.Lock()
				l.got = append(l.got, sc.Text())
				l.mu.Unlock()
			}
		},
		Event: func(e Event) {
			l.mu.Lock()
			l.events = append(l.events, e.Kind)
			l.mu.Unlock()
		},
	}
}

func (l *lines) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

func (l *lines) has(kind EventKind) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range l.events {
		if k == kind {
			return true
		}
	}
	return false
}

func start(t *testing.T, f *Follower) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		f.Run(ctx)
		close(done)
	}()
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return")
		}
	}
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(line + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestFileIsFollowedFromItsEndAndAcrossRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "neuron-monitor.json")
	require.NoError(t, os.WriteFile(path, []byte("{\"old\":1}\n{\"old\":2}\n{\"partial"), 0o600))

	var l lines
	stop := start(t, New(path, 5*time.Millisecond, l.hooks()))
	defer stop()
	require.Eventually(t, func() bool { return l.has(Opened) }, 5*time.Second, time.Millisecond)
	l.mu.Lock()
	first := l.streams[0]
	l.mu.Unlock()
	assert.True(t, first.MidLine, "the file ends mid-line")
	assert.Equal(t, int64(29), first.Offset)

	appendLine(t, path, `":3}`)
	appendLine(t, path, `{"new":1}`)
	require.Eventually(t, func() bool { return len(l.snapshot()) == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, []string{`":3}`, `{"new":1}`}, l.snapshot(), "history is not replayed; the consumer sees the partial line and skips it")

	// Rotate: move the file away and write a new one.
	require.NoError(t, os.Rename(path, path+".1"))
	appendLine(t, path, `{"rotated":1}`)
	require.Eventually(t, func() bool { return len(l.snapshot()) == 3 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, `{"rotated":1}`, l.snapshot()[2])
	assert.True(t, l.has(Rotated))

	// Truncate in place.
	require.NoError(t, os.WriteFile(path, []byte("{\"t\":1}\n"), 0o600))
	require.Eventually(t, func() bool { return len(l.snapshot()) == 4 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, `{"t":1}`, l.snapshot()[3])
}

func TestMissingPathIsWaitedFor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "later.json")
	var l lines
	stop := start(t, New(path, 5*time.Millisecond, l.hooks()))
	defer stop()
	require.Eventually(t, func() bool { return l.has(Missing) }, 5*time.Second, time.Millisecond)
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	require.Eventually(t, func() bool { return l.has(Opened) }, 5*time.Second, time.Millisecond)
	appendLine(t, path, `{"a":1}`)
	require.Eventually(t, func() bool { return len(l.snapshot()) == 1 }, 5*time.Second, time.Millisecond)
}

func TestFIFOSurvivesWriterRestartsAndShutdownUnblocksIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "neuron-monitor.fifo")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	var l lines
	stop := start(t, New(path, 5*time.Millisecond, l.hooks()))
	require.Eventually(t, func() bool { return l.has(Opened) }, 5*time.Second, time.Millisecond)

	for i, doc := range []string{`{"writer":1}`, `{"writer":2}`} {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = w.WriteString(doc + "\n")
		require.NoError(t, err)
		require.NoError(t, w.Close()) // the writer goes away, as a restarting neuron-monitor does
		require.Eventually(t, func() bool { return len(l.snapshot()) == i+1 }, 5*time.Second, time.Millisecond)
	}
	l.mu.Lock()
	assert.Len(t, l.streams, 1, "one stream across writer restarts")
	l.mu.Unlock()
	stop() // returns although the read is blocked with no writer
}
