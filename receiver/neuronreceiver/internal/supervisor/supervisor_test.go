//go:build linux

package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test binary doubles as the child: `<test binary> helper-child <mode>`.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "helper-child" {
		os.Exit(helperChild(os.Args[2]))
	}
	os.Exit(m.Run())
}

func helperChild(mode string) int {
	switch mode {
	case "crash":
		fmt.Println("hello")
		fmt.Fprintln(os.Stderr, "neuron-monitor: fatal: cannot open /dev/neuron0")
		return 3
	case "serve":
		// Exits cleanly on SIGTERM, like neuron-monitor.
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		fmt.Println("ready")
		<-ch
		return 0
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		time.Sleep(time.Hour)
		return 0
	case "spawn":
		// Leaves a grandchild behind that holds stdout open.
		gc := exec.Command(os.Args[0], "helper-child", "stubborn")
		gc.Stdout = os.Stdout
		if err := gc.Start(); err != nil {
			return 1
		}
		fmt.Println(gc.Process.Pid)
		return 0
	}
	return 2
}

func helper(mode string) Config {
	return Config{Command: os.Args[0], Args: []string{"helper-child", mode}, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, ResetAfter: time.Hour, GracePeriod: 2 * time.Second}
}

type recorder struct {
	mu     sync.Mutex
	events []Event
	stdout []string
	stderr []string
	pids   []int
	ready  chan int
}

func newRecorder() *recorder { return &recorder{ready: make(chan int, 16)} }

func (r *recorder) hooks() Hooks {
	return Hooks{
		Stdout: func(run Run, in io.Reader) {
			sc := bufio.NewScanner(in)
			for sc.Scan() {
				r.mu.Lock()
				r.stdout = append(r.stdout, sc.Text())
				r.mu.Unlock()
				r.ready <- run.PID
			}
		},
		Stderr: func(_ Run, line string) {
			r.mu.Lock()
			r.stderr = append(r.stderr, line)
			r.mu.Unlock()
		},
		Event: func(e Event) {
			r.mu.Lock()
			r.events = append(r.events, e)
			if e.Kind == Started {
				r.pids = append(r.pids, e.Run.PID)
			}
			r.mu.Unlock()
		},
	}
}

func (r *recorder) count(kind EventKind) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func runUntil(t *testing.T, s *Supervisor, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		s.Run(ctx)
		close(done)
	}()
	require.Eventually(t, cond, 30*time.Second, 5*time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestBackoffResetsAfterAHealthyRun(t *testing.T) {
	rec := newRecorder()
	cfg := helper("crash")
	cfg.ResetAfter = time.Nanosecond // every run counts as healthy
	runUntil(t, New(cfg, rec.hooks()), func() bool { return rec.count(Exited) >= 3 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, e := range rec.events {
		if e.Kind == Exited {
			assert.Equal(t, 10*time.Millisecond, e.RestartIn)
		}
	}
}

func TestCrashingChildIsRestartedWithBackoff(t *testing.T) {
	rec := newRecorder()
	s := New(helper("crash"), rec.hooks())
	runUntil(t, s, func() bool { return rec.count(Exited) >= 4 })

	rec.mu.Lock()
	defer rec.mu.Unlock()
	var delays []time.Duration
	for _, e := range rec.events {
		if e.Kind == Exited {
			delays = append(delays, e.RestartIn)
			assert.EqualError(t, e.Err, "exit status 3")
			assert.NotZero(t, e.Run.PID)
		}
	}
	assert.Equal(t, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond}, delays[:4])
	assert.GreaterOrEqual(t, len(rec.stdout), 4, "each run's stdout reaches the consumer")
	assert.Contains(t, rec.stderr, "neuron-monitor: fatal: cannot open /dev/neuron0")
	for _, pid := range rec.pids {
		assertGone(t, pid)
	}
}

func TestMissingCommand(t *testing.T) {
	for cmd, msg := range map[string]string{
		"neuron-monitor-that-does-not-exist": "neuron-monitor-that-does-not-exist not found in PATH",
		"/nonexistent/neuron-monitor":        "/nonexistent/neuron-monitor not found",
	} {
		rec := newRecorder()
		s := New(Config{Command: cmd, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}, rec.hooks())
		runUntil(t, s, func() bool { return rec.count(NotFound) >= 3 })
		rec.mu.Lock()
		var nf *NotFoundError
		require.ErrorAs(t, rec.events[0].Err, &nf)
		assert.Equal(t, msg, nf.Error())
		rec.mu.Unlock()
		assert.Zero(t, rec.count(Started))
	}
}

func TestShutdownTerminatesAndReapsTheChild(t *testing.T) {
	rec := newRecorder()
	s := New(helper("serve"), rec.hooks())
	var pid int
	runUntil(t, s, func() bool {
		select {
		case pid = <-rec.ready:
			return true
		default:
			return false
		}
	})
	assertGone(t, pid)
	assert.Zero(t, rec.count(Exited), "a stop on shutdown is not reported as a crash")
}

func TestShutdownKillsAChildThatIgnoresSIGTERM(t *testing.T) {
	rec := newRecorder()
	cfg := helper("stubborn")
	cfg.GracePeriod = 100 * time.Millisecond
	s := New(cfg, rec.hooks())
	var pid int
	runUntil(t, s, func() bool {
		select {
		case pid = <-rec.ready:
			return true
		default:
			return false
		}
	})
	assertGone(t, pid)
}

func TestLeftoverDescendantsAreKilled(t *testing.T) {
	rec := newRecorder()
	cfg := helper("spawn")
	cfg.GracePeriod = 200 * time.Millisecond
	cfg.InitialBackoff = time.Hour
	cfg.MaxBackoff = time.Hour
	s := New(cfg, rec.hooks())
	runUntil(t, s, func() bool { return rec.count(Exited) >= 1 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.NotEmpty(t, rec.stdout)
	grandchild, err := strconv.Atoi(rec.stdout[0])
	require.NoError(t, err)
	assertGone(t, grandchild)
}

// assertGone checks that pid no longer runs: it does not exist, or it is a
// zombie waiting for a reaper other than us (an orphaned grandchild).
func assertGone(t *testing.T, pid int) {
	t.Helper()
	require.Eventually(t, func() bool {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		return len(fields) > 0 && fields[0] == "Z" && !isOurChild(pid)
	}, 10*time.Second, 10*time.Millisecond, "pid %d still runs", pid)
}

func isOurChild(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid())
}
