// Package mps asks an NVIDIA MPS control daemon whether it answers, which
// servers it runs and its default active-thread percentage, by running its
// control client (nvidia-cuda-mps-control) with CUDA_MPS_PIPE_DIRECTORY set
// and one command on stdin, as NVIDIA's device plugin does for its health
// check.
package mps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// DefaultPipeDirectory is where the MPS control daemon puts its pipes when
// CUDA_MPS_PIPE_DIRECTORY is not set.
const DefaultPipeDirectory = "/tmp/nvidia-mps"

// DefaultControlCommand is the MPS control client.
const DefaultControlCommand = "nvidia-cuda-mps-control"

// Settings says where the daemon is and how to reach it.
type Settings struct {
	PipeDirectory  string
	ControlCommand string
	// Explicit is true when the user configured MPS; then a missing pipe
	// directory is reported as the daemon being down instead of MPS being
	// quietly off.
	Explicit bool
	// Timeout bounds one control command.
	Timeout time.Duration
}

// Status is what one check found.
type Status struct {
	// Checked is false when MPS checks are off: no pipe directory, not
	// configured, never seen up.
	Checked bool
	Up      bool
	// Servers is the number of MPS servers the daemon runs.
	Servers model.Value
	// DefaultActiveThreads is the default active-thread percentage as a
	// fraction.
	DefaultActiveThreads model.Value
	// Stopped is true on the check where a daemon that answered before
	// stopped answering.
	Stopped bool
	// Err says why the daemon is not up (or why it could not be asked).
	Err error
}

// Runner runs the control command with env added to the environment and
// stdin as its input, and returns its standard output.
type Runner func(ctx context.Context, command string, env []string, stdin string) (string, error)

// ErrNoClient is returned when the control command cannot be run at all.
var ErrNoClient = errors.New("MPS control command not found")

// ExecRunner runs the command as a subprocess.
func ExecRunner(ctx context.Context, command string, env []string, stdin string) (string, error) {
	cmd := exec.CommandContext(ctx, command)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%w: %q (%v)", ErrNoClient, command, err)
		}
		msg := strings.TrimSpace(stderr.String() + " " + stdout.String())
		if msg == "" {
			return "", err
		}
		return "", fmt.Errorf("%w: %s", err, msg)
	}
	return stdout.String(), nil
}

// Monitor checks the daemon on every scrape and remembers whether it was up.
type Monitor struct {
	settings Settings
	run      Runner
	wasUp    bool
}

// NewMonitor returns a monitor; run is ExecRunner outside tests.
func NewMonitor(settings Settings, run Runner) *Monitor {
	if settings.Timeout <= 0 {
		settings.Timeout = 5 * time.Second
	}
	return &Monitor{settings: settings, run: run}
}

// Settings returns what the monitor checks.
func (m *Monitor) Settings() Settings { return m.settings }

// Check asks the daemon once.
func (m *Monitor) Check(ctx context.Context) Status {
	st := m.check(ctx)
	st.Stopped = m.wasUp && st.Checked && !st.Up
	if st.Checked {
		m.wasUp = st.Up
	}
	return st
}

func (m *Monitor) check(ctx context.Context) Status {
	dir := m.settings.PipeDirectory
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if !m.settings.Explicit && !m.wasUp {
			return Status{}
		}
		return Status{Checked: true, Err: fmt.Errorf("MPS pipe directory %s does not exist", dir)}
	}
	pct, err := m.ask(ctx, "get_default_active_thread_percentage")
	if err != nil {
		if errors.Is(err, ErrNoClient) && !m.settings.Explicit && !m.wasUp {
			// Not knowing is not the same as down: report nothing, the
			// receiver says once what to install.
			return Status{Err: err}
		}
		return Status{Checked: true, Err: err}
	}
	st := Status{Checked: true, Up: true}
	if v, perr := strconv.ParseFloat(strings.TrimSpace(pct), 64); perr == nil && v >= 0 && v <= 100 {
		st.DefaultActiveThreads = model.Of(v / 100)
	} else {
		st.Err = fmt.Errorf("get_default_active_thread_percentage answered %q, not a percentage", truncate(pct))
	}
	list, err := m.ask(ctx, "get_server_list")
	if err != nil {
		st.Err = err
		return st
	}
	n := 0
	for _, line := range strings.Split(list, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if _, perr := strconv.ParseUint(line, 10, 32); perr != nil {
			st.Err = fmt.Errorf("get_server_list answered %q, not a list of server PIDs", truncate(line))
			continue
		}
		n++
	}
	st.Servers = model.Of(float64(n))
	return st
}

func (m *Monitor) ask(ctx context.Context, command string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, m.settings.Timeout)
	defer cancel()
	out, err := m.run(ctx, m.settings.ControlCommand, []string{"CUDA_MPS_PIPE_DIRECTORY=" + m.settings.PipeDirectory}, command+"\n")
	if err != nil {
		return "", fmt.Errorf("%s (CUDA_MPS_PIPE_DIRECTORY=%s) %s: %w", m.settings.ControlCommand, m.settings.PipeDirectory, command, err)
	}
	return out, nil
}

func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
