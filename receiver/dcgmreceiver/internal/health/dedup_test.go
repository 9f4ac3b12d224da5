package health

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

func kernelXID(id model.Identity, code int, at time.Time) model.Event {
	return model.Event{Device: id, Time: at, Kind: model.EventXID, Code: code, Source: SourceKernelLog,
		PID: 4242, Process: "python3", Detail: "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus."}
}

// The same XID from NVML and the kernel log within the window is one event
// naming both sources and the kernel's pid; hw.errors counts it once.
func TestSameXIDFromNVMLAndKernelLogIsOneEvent(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	tr.SetDedupWindow(5 * time.Second)
	id := gpu("GPU-a")

	assert.Empty(t, tr.ObserveEvent(model.Event{Device: id, Time: t0, Kind: model.EventXID, Code: 79}), "held for the window")
	assert.Equal(t, accelschema.HWStateFailed, tr.State(id, t0), "the state does not wait for the window")
	assert.Empty(t, tr.ObserveEvent(kernelXID(id, 79, t0.Add(300*time.Millisecond))), "joins the NVML event")
	assert.Empty(t, tr.Due(t0.Add(4*time.Second)))

	due := tr.Due(t0.Add(5 * time.Second))
	require.Len(t, due, 1)
	assert.Equal(t, []string{SourceKernelLog, SourceNVML}, due[0].Sources)
	assert.Equal(t, 4242, due[0].PID)
	assert.Equal(t, "python3", due[0].Process)
	assert.Contains(t, due[0].Detail, "fallen off the bus")
	assert.Equal(t, 79, due[0].XID)
	assert.Equal(t, []XIDCount{{Code: 79, Count: 1}}, tr.XIDCounts("GPU-a"))
	assert.Empty(t, tr.Due(t0.Add(time.Hour)), "given out once")
}

// Two XIDs from one source are two events, each joined by the other
// source's matching report; reports outside the window, of another code or
// another GPU stay apart.
func TestDedupKeepsDistinctXIDsApart(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	tr.SetDedupWindow(5 * time.Second)
	a, b := gpu("GPU-a"), gpu("GPU-b")
	tr.ObserveEvent(kernelXID(a, 13, t0))
	tr.ObserveEvent(kernelXID(a, 13, t0.Add(100*time.Millisecond)))
	tr.ObserveEvent(model.Event{Device: a, Time: t0.Add(200 * time.Millisecond), Kind: model.EventXID, Code: 13})
	tr.ObserveEvent(model.Event{Device: a, Time: t0.Add(300 * time.Millisecond), Kind: model.EventXID, Code: 13})
	tr.ObserveEvent(model.Event{Device: a, Time: t0.Add(300 * time.Millisecond), Kind: model.EventXID, Code: 31})
	tr.ObserveEvent(model.Event{Device: b, Time: t0.Add(300 * time.Millisecond), Kind: model.EventXID, Code: 13})
	tr.ObserveEvent(model.Event{Device: a, Time: t0.Add(20 * time.Second), Kind: model.EventXID, Code: 13})

	due := tr.Due(t0.Add(time.Minute))
	var got []string
	for _, r := range due {
		got = append(got, fmt.Sprintf("%s/%d/%s", r.Device.HWID, r.XID, strings.Join(r.Sources, "+")))
	}
	assert.Equal(t, []string{
		"GPU-a/13/kernel_log+nvml", "GPU-a/13/kernel_log+nvml",
		"GPU-a/31/nvml", "GPU-b/13/nvml", "GPU-a/13/nvml",
	}, got)
	assert.Equal(t, []XIDCount{{Code: 13, Count: 3}, {Code: 31, Count: 1}}, tr.XIDCounts("GPU-a"))
}

// dcgm-exporter's last XID seen at a scrape joins the kernel log's report
// of it.
func TestDedupAgainstDCGMExporterScrape(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	tr.SetDedupWindow(15 * time.Second)
	id := gpu("GPU-a")
	s := healthy(id)
	s.LastXID = model.Of(0)
	tr.Observe(snap(t0, s)) // the baseline
	tr.ObserveEvent(kernelXID(id, 48, t0.Add(2*time.Second)))
	s.LastXID = model.Of(48)
	assert.Empty(t, tr.Observe(snap(t0.Add(10*time.Second), s)))
	due := tr.Due(t0.Add(time.Minute))
	require.Len(t, due, 1)
	assert.Equal(t, []string{SourceDCGMExporter, SourceKernelLog}, due[0].Sources)
	assert.Equal(t, []XIDCount{{Code: 48, Count: 1}}, tr.XIDCounts("GPU-a"))
}

// Without a window (one source) nothing is held.
func TestNoWindowPublishesAtOnce(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	recs := tr.ObserveEvent(model.Event{Device: gpu("GPU-a"), Time: t0, Kind: model.EventXID, Code: 79})
	require.Len(t, recs, 1)
	assert.Equal(t, []string{SourceNVML}, recs[0].Sources)
	assert.Empty(t, tr.Due(t0.Add(time.Hour)))
}

// A flood is paced: every XID is counted, the first floodBurst are
// announced, then floodRate a second, and the next one announced says how
// many were not.
func TestFloodIsCountedButPaced(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	tr.SetDedupWindow(time.Second)
	id := gpu("GPU-a")
	var announced int
	for i := range 500 {
		announced += len(tr.ObserveEvent(kernelXID(id, 13, t0.Add(time.Duration(i)*time.Millisecond))))
	}
	announced += len(tr.Due(t0.Add(time.Hour)))
	assert.Equal(t, floodBurst, announced, "20 at once; half a second of flood earns no more")
	assert.Equal(t, []XIDCount{{Code: 13, Count: 500}}, tr.XIDCounts("GPU-a"), "every XID is counted")

	tr.ObserveEvent(kernelXID(id, 13, t0.Add(10*time.Second)))
	due := tr.Due(t0.Add(time.Hour))
	require.Len(t, due, 1)
	assert.Contains(t, due[0].Message, "480 more of this XID from kernel_log since the last event were counted in hw.errors but not announced")
}

// Held events are bounded: past maxPending (many GPUs and codes at once),
// the oldest go out at once.
func TestPendingIsBounded(t *testing.T) {
	tr := New(10*time.Minute, time.Hour)
	tr.SetDedupWindow(time.Minute)
	var early int
	for i := range maxPending + 10 {
		id := gpu(fmt.Sprintf("GPU-%d", i))
		early += len(tr.ObserveEvent(kernelXID(id, 13, t0)))
	}
	assert.Equal(t, 10, early)
	assert.Len(t, tr.Due(t0.Add(time.Hour)), maxPending)
}
