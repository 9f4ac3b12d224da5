package e2etest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a child process whose output is captured.
type Process struct {
	Name string
	cmd  *exec.Cmd
	log  *logBuffer
	done chan struct{}
	mu   sync.Mutex
	err  error
}

// StartProcess starts binary with args and extra environment ("KEY=value").
// The process is stopped when the test ends; if the test failed, its output
// is logged.
func StartProcess(t testing.TB, name, binary string, args, env []string) *Process {
	t.Helper()
	p := &Process{Name: name, log: newLogBuffer(), done: make(chan struct{})}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout = p.log
	p.cmd.Stderr = p.log
	// Own process group, so a stop reaches grandchildren (neuron-monitor).
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		err := p.cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.Stop(20 * time.Second)
		if t.Failed() {
			t.Logf("---- %s output ----\n%s\n---- end of %s output ----", name, tail(p.Output(), 200), name)
		}
	})
	return p
}

// Output is everything the process printed so far.
func (p *Process) Output() string { return p.log.String() }

// CountLines returns how many output lines contain every one of subs.
func (p *Process) CountLines(subs ...string) int { return p.log.Count(subs...) }

// PID of the child.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.err
	default:
		return false, nil
	}
}

// WaitForOutput waits until the output contains substr.
func (p *Process) WaitForOutput(ctx context.Context, substr string) error {
	for {
		text, changed := p.log.snapshot()
		if strings.Contains(text, substr) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never printed %q: %w", p.Name, substr, ctx.Err())
		case <-p.done:
			if strings.Contains(p.Output(), substr) {
				return nil
			}
			return fmt.Errorf("%s exited before printing %q", p.Name, substr)
		case <-changed:
		}
	}
}

// Stop sends SIGTERM to the process group and waits; after timeout it kills.
// It returns the exit error unless the process ended because of the signal.
func (p *Process) Stop(timeout time.Duration) error {
	if exited, err := p.Exited(); exited {
		return exitErr(err)
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
		_, err := p.Exited()
		return exitErr(err)
	case <-time.After(timeout):
		p.Kill()
		return fmt.Errorf("%s did not stop within %s of SIGTERM", p.Name, timeout)
	}
}

// Kill sends SIGKILL to the process group, as a crash would, and waits.
func (p *Process) Kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

func exitErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	return err
}

func tail(s string, lines int) string {
	parts := strings.Split(s, "\n")
	if len(parts) <= lines {
		return s
	}
	return fmt.Sprintf("… (%d lines cut)\n%s", len(parts)-lines, strings.Join(parts[len(parts)-lines:], "\n"))
}
