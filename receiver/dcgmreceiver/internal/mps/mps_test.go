package mps

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

func fakeClient(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mps", "fake-nvidia-cuda-mps-control"))
	require.NoError(t, err)
	return p
}

// daemon simulates a running MPS control daemon: its control pipe and what
// it answers.
func daemon(t *testing.T, dir, servers, pct string) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "control"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "servers"), []byte(servers), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "default_active_thread_percentage"), []byte(pct), 0o600))
}

func TestAbsentAndNotConfiguredIsQuietlyOff(t *testing.T) {
	m := NewMonitor(Settings{PipeDirectory: filepath.Join(t.TempDir(), "nvidia-mps"), ControlCommand: fakeClient(t)}, ExecRunner)
	st := m.Check(context.Background())
	assert.False(t, st.Checked)
	assert.NoError(t, st.Err)
}

func TestDaemonUpThenStops(t *testing.T) {
	dir := t.TempDir()
	daemon(t, dir, "4021\n4388\n", "50.0\n")
	m := NewMonitor(Settings{PipeDirectory: dir, ControlCommand: fakeClient(t)}, ExecRunner)

	st := m.Check(context.Background())
	require.NoError(t, st.Err)
	assert.True(t, st.Checked)
	assert.True(t, st.Up)
	assert.Equal(t, model.Of(2), st.Servers)
	assert.Equal(t, model.Of(0.5), st.DefaultActiveThreads)
	assert.False(t, st.Stopped)

	require.NoError(t, os.Remove(filepath.Join(dir, "control")))
	st = m.Check(context.Background())
	assert.True(t, st.Checked)
	assert.False(t, st.Up)
	assert.True(t, st.Stopped, "the check where it stops answering says so")
	assert.ErrorContains(t, st.Err, "Cannot find MPS control daemon process")
	assert.ErrorContains(t, st.Err, "get_default_active_thread_percentage")

	st = m.Check(context.Background())
	assert.False(t, st.Stopped, "once")

	// The pipe directory vanishing after the daemon was seen is down too.
	require.NoError(t, os.RemoveAll(dir))
	daemonUp := NewMonitor(Settings{PipeDirectory: dir, ControlCommand: fakeClient(t)}, ExecRunner)
	daemonUp.wasUp = true
	st = daemonUp.Check(context.Background())
	assert.True(t, st.Checked)
	assert.True(t, st.Stopped)
}

func TestNoServersYet(t *testing.T) {
	dir := t.TempDir()
	daemon(t, dir, "", "100.0")
	st := NewMonitor(Settings{PipeDirectory: dir, ControlCommand: fakeClient(t)}, ExecRunner).Check(context.Background())
	require.NoError(t, st.Err)
	assert.Equal(t, model.Of(0), st.Servers)
	assert.Equal(t, model.Of(1), st.DefaultActiveThreads)
}

func TestExplicitMissingDirectoryIsDown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	st := NewMonitor(Settings{PipeDirectory: dir, ControlCommand: fakeClient(t), Explicit: true}, ExecRunner).Check(context.Background())
	assert.True(t, st.Checked)
	assert.False(t, st.Up)
	assert.ErrorContains(t, st.Err, dir+" does not exist")
}

func TestClientNotInstalled(t *testing.T) {
	dir := t.TempDir()
	daemon(t, dir, "1\n", "100")
	st := NewMonitor(Settings{PipeDirectory: dir, ControlCommand: "no-such-mps-control-client"}, ExecRunner).Check(context.Background())
	assert.False(t, st.Checked, "found by default location only: unknown is not down")
	assert.ErrorIs(t, st.Err, ErrNoClient)

	st = NewMonitor(Settings{PipeDirectory: dir, ControlCommand: "no-such-mps-control-client", Explicit: true}, ExecRunner).Check(context.Background())
	assert.True(t, st.Checked, "configured: reported as down")
	assert.False(t, st.Up)
	assert.ErrorIs(t, st.Err, ErrNoClient)
}

func TestGarbledAnswers(t *testing.T) {
	dir := t.TempDir()
	daemon(t, dir, "4021\nnot-a-pid\n", "lots")
	st := NewMonitor(Settings{PipeDirectory: dir, ControlCommand: fakeClient(t)}, ExecRunner).Check(context.Background())
	assert.True(t, st.Up, "it answered")
	assert.False(t, st.DefaultActiveThreads.OK)
	assert.Equal(t, model.Of(1), st.Servers)
	assert.ErrorContains(t, st.Err, "not a list of server PIDs")
}

func TestHungClientTimesOut(t *testing.T) {
	dir := t.TempDir()
	daemon(t, dir, "", "100")
	hang := func(ctx context.Context, _ string, _ []string, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}
	st := NewMonitor(Settings{PipeDirectory: dir, ControlCommand: "x", Timeout: 50 * time.Millisecond}, hang).Check(context.Background())
	assert.False(t, st.Up)
	assert.ErrorIs(t, st.Err, context.DeadlineExceeded)
}
