package e2etest

import (
	"bytes"
	"strings"
	"sync"
)

// logBuffer collects a child's combined output and lets tests wait for lines.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newLogBuffer() *logBuffer { return &logBuffer{changed: make(chan struct{})} }

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(p)
	close(l.changed)
	l.changed = make(chan struct{})
	return n, err
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// snapshot returns the text so far and a channel closed on the next write.
func (l *logBuffer) snapshot() (string, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String(), l.changed
}

// Count returns how many lines contain every one of subs.
func (l *logBuffer) Count(subs ...string) int {
	n := 0
next:
	for _, line := range strings.Split(l.String(), "\n") {
		for _, sub := range subs {
			if !strings.Contains(line, sub) {
				continue next
			}
		}
		n++
	}
	return n
}
