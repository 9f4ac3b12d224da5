package kernlog

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/sim"
	"github.com/otelcol-accel/otelcol-accel/internal/kernellog"
)

// The demo fleet's failures, as the drivers would write them: every line is
// one the kernel log reader reads, on the failing GPU's bus or Neuron
// device.
func TestDemoFailuresAsKernelLines(t *testing.T) {
	s, err := scenario.Load(filepath.Join("..", "..", "..", "distributions", "otelcol-accel", "demo", "fleet.yaml"))
	require.NoError(t, err)
	f, err := fleet.Build(s, uint64(s.Seed))
	require.NoError(t, err)
	var got []string
	for _, n := range f.Nodes {
		for _, e := range Entries(n) {
			m, err := kernellog.Parse(e.Text)
			require.NoError(t, err, e.Text)
			switch m.Kind {
			case kernellog.KindXID:
				got = append(got, n.Name+" xid "+itoa(m.Code)+" "+m.Bus)
			case kernellog.KindNeuronHWError:
				got = append(got, n.Name+" "+m.NeuronError+" nd-id="+itoa(m.Device))
			}
		}
	}
	// fleet.yaml: XID 48 on an A100's GPU 6, XID 79 on an H200's GPU 6, a
	// row remap pending (XID 63) on an H100's GPU 7, uncorrected memory ECC
	// on an inf2's device 10, XID 92 on an A100's GPU 4; the H100 GPU 0's
	// throttling writes no kernel line.
	require.Len(t, got, 5, "%v", got)
	joined := strings.Join(got, "\n")
	for _, want := range []string{" xid 48 ", " xid 79 ", " xid 63 ", " xid 92 ", "HBM_UNCORRECTABLE_ERROR nd-id=10"} {
		assert.Contains(t, joined, want)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// Run writes each line at its time in the syslog format the file source
// reads, with the node as the host.
func TestRunWritesSyslogLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kern.log")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- Run(ctx, path, "gpu-node-1", []Entry{{At: 0, Text: "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."}},
			sim.Timeline{Start: start, Speed: 10, Clock: sim.WallClock{}})
	}()
	require.Eventually(t, func() bool { b, _ := os.ReadFile(path); return len(b) > 0 }, 30*time.Second, 5*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	ts, msg := kernellog.SplitPrefix(strings.TrimSpace(string(b)), kernellog.Clock{})
	assert.True(t, ts.Equal(start), "the line's time is the failure's: %v, want %v", ts, start)
	assert.True(t, strings.HasPrefix(msg, "NVRM: Xid (PCI:0000:3b:00): 79"))
	assert.Contains(t, string(b), " gpu-node-1 kernel: ")
}
