// Package supervisor runs a child process for as long as the collector runs:
// it restarts the child with exponential backoff when it exits, hands its
// stdout to a consumer and its stderr lines to a logger, and on shutdown
// sends SIGTERM, then SIGKILL after a grace period, and reaps it, so that no
// zombie or orphan is left behind.
package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Config says what to run and how to restart it.
type Config struct {
	Command string
	Args    []string
	// InitialBackoff is the first delay before a restart; it doubles up to
	// MaxBackoff, and goes back to InitialBackoff once a child has run for
	// ResetAfter (default MaxBackoff): a child that ran that long was
	// healthy, and its next failure is a new one.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	ResetAfter     time.Duration
	// GracePeriod is how long the child has to exit after SIGTERM.
	GracePeriod time.Duration
}

// Run identifies one start of the child.
type Run struct {
	// Number counts starts, from 1.
	Number int
	PID    int
}

func (r Run) String() string { return fmt.Sprintf("pid %d, start #%d", r.PID, r.Number) }

// EventKind says what happened to the child.
type EventKind int

const (
	// Started: the child is running.
	Started EventKind = iota + 1
	// Exited: the child exited (Err says how) and will be restarted after
	// RestartIn.
	Exited
	// NotFound: the command does not exist; it is looked up again after
	// RestartIn.
	NotFound
	// StartFailed: the command exists but could not be started.
	StartFailed
)

// Event is a change in the child's life.
type Event struct {
	Kind      EventKind
	Run       Run
	Err       error
	Uptime    time.Duration
	RestartIn time.Duration
}

// Hooks receive the child's output and life events. Stdout is called once
// per start, on its own goroutine, and must read until EOF or error; the
// next start waits for it to return.
type Hooks struct {
	Stdout func(run Run, r io.Reader)
	Stderr func(run Run, line string)
	Event  func(Event)
}

// NotFoundError is returned when the command is not on PATH or not at the
// path given.
type NotFoundError struct {
	Command string
	Err     error
}

func (e *NotFoundError) Error() string {
	if strings.ContainsRune(e.Command, os.PathSeparator) {
		return e.Command + " not found"
	}
	return e.Command + " not found in PATH"
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// Supervisor runs one child at a time.
type Supervisor struct {
	cfg   Config
	hooks Hooks
	// sleep waits for d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) bool
}

// New returns a Supervisor.
func New(cfg Config, hooks Hooks) *Supervisor {
	if cfg.InitialBackoff <= 0 {
		cfg.InitialBackoff = time.Second
	}
	if cfg.MaxBackoff < cfg.InitialBackoff {
		cfg.MaxBackoff = cfg.InitialBackoff
	}
	if cfg.ResetAfter <= 0 {
		cfg.ResetAfter = cfg.MaxBackoff
	}
	if cfg.GracePeriod <= 0 {
		cfg.GracePeriod = 5 * time.Second
	}
	if hooks.Stdout == nil {
		hooks.Stdout = func(_ Run, r io.Reader) { _, _ = io.Copy(io.Discard, r) }
	}
	if hooks.Stderr == nil {
		hooks.Stderr = func(Run, string) {}
	}
	if hooks.Event == nil {
		hooks.Event = func(Event) {}
	}
	return &Supervisor{cfg: cfg, hooks: hooks, sleep: sleepCtx}
}

// Run keeps the child running until ctx is done, then stops it and returns
// once it has been reaped.
func (s *Supervisor) Run(ctx context.Context) {
	delay := s.cfg.InitialBackoff
	for n := 1; ctx.Err() == nil; n++ {
		path, err := exec.LookPath(s.cfg.Command)
		if err != nil {
			var ev Event
			if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
				ev = Event{Kind: NotFound, Err: &NotFoundError{Command: s.cfg.Command, Err: err}}
			} else {
				ev = Event{Kind: StartFailed, Err: err}
			}
			ev.RestartIn = delay
			s.hooks.Event(ev)
		} else {
			uptime, err := s.runOnce(ctx, path, n)
			if ctx.Err() != nil {
				return
			}
			if uptime >= s.cfg.ResetAfter {
				delay = s.cfg.InitialBackoff
			}
			kind := Exited
			if uptime == 0 {
				kind = StartFailed
			}
			s.hooks.Event(Event{Kind: kind, Run: Run{Number: n, PID: lastPID(err)}, Err: err, Uptime: uptime, RestartIn: delay})
		}
		if !s.sleep(ctx, delay) {
			return
		}
		delay = min(2*delay, s.cfg.MaxBackoff)
	}
}

// exitError carries the pid of the child that exited.
type exitError struct {
	pid int
	err error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func lastPID(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.pid
	}
	return 0
}

// runOnce starts the child, waits for it to exit (or stops it when ctx is
// done), and returns how long it ran and why it stopped. An uptime of zero
// means it never started.
func (s *Supervisor) runOnce(ctx context.Context, path string, n int) (time.Duration, error) {
	// Our own pipes rather than cmd.StdoutPipe: Wait may then run while the
	// output is still being read, so an exit is seen even if something the
	// child started keeps the pipe open.
	outR, outW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return 0, err
	}
	cmd := exec.Command(path, s.cfg.Args...)
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.SysProcAttr = sysProcAttr()
	started := time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return 0, err
	}
	run := Run{Number: n, PID: cmd.Process.Pid}
	s.hooks.Event(Event{Kind: Started, Run: run})

	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		s.hooks.Stdout(run, outR)
	}()
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 0, 4096), 64<<10)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				s.hooks.Stderr(run, line)
			}
		}
		// A line longer than the buffer ends the scan; drain the rest so
		// the child never blocks on a full stderr pipe.
		_, _ = io.Copy(io.Discard, errR)
	}()

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
	case <-ctx.Done():
		werr = s.stop(cmd, waited)
	}
	uptime := max(time.Since(started), time.Nanosecond)
	// Whatever the child left behind in its process group goes with it.
	killGroup(cmd.Process.Pid)
	s.waitReaders(&readers, outR, errR)
	if werr == nil {
		werr = errors.New("exited with status 0")
	}
	return uptime, &exitError{pid: run.PID, err: werr}
}

// stop sends SIGTERM to the child's process group, then SIGKILL after the
// grace period, and returns the child's exit.
func (s *Supervisor) stop(cmd *exec.Cmd, waited <-chan error) error {
	terminateGroup(cmd.Process.Pid)
	t := time.NewTimer(s.cfg.GracePeriod)
	defer t.Stop()
	select {
	case err := <-waited:
		return err
	case <-t.C:
		killGroup(cmd.Process.Pid)
		_ = cmd.Process.Kill()
		return <-waited
	}
}

// waitReaders waits for the output readers to reach EOF; if a descendant
// that escaped the process group still holds the pipes after the grace
// period, the read ends are closed, which unblocks the readers.
func (s *Supervisor) waitReaders(readers *sync.WaitGroup, files ...*os.File) {
	done := make(chan struct{})
	go func() {
		readers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(s.cfg.GracePeriod):
		for _, f := range files {
			f.Close()
		}
		<-done
	}
	for _, f := range files {
		f.Close()
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
