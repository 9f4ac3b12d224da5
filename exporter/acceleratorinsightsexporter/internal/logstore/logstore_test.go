package logstore

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

func record(ld plog.Logs, hwID, name string, at time.Time, attrs map[string]any) {
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(s.AttrHWID, hwID)
	rl.Resource().Attributes().PutStr(s.AttrK8sNodeName, "n1")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(at))
	lr.SetEventName(name)
	if err := lr.Attributes().FromRaw(attrs); err != nil {
		panic(err)
	}
}

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// The events kept are the newest max_events, newest first; other log
// records are ignored.
func TestEventsBoundedNewestFirst(t *testing.T) {
	st := New(3, 10)
	ld := plog.NewLogs()
	for i := 0; i < 5; i++ {
		record(ld, "GPU-1", s.EventXID, t0.Add(time.Duration(i)*time.Minute), map[string]any{s.AttrXID: int64(13 + i)})
	}
	record(ld, "GPU-1", "some.other.event", t0, nil)
	st.Consume(ld)
	evs := st.Snapshot().Events
	require.Len(t, evs, 3)
	for i, want := range []int64{17, 16, 15} {
		require.Equal(t, want, *evs[i].XID)
	}
}

type memClient struct{ data map[string][]byte }

func (m *memClient) Get(_ context.Context, k string) ([]byte, error) { return m.data[k], nil }
func (m *memClient) Set(_ context.Context, k string, v []byte) error {
	m.data[k] = v
	return nil
}
func (m *memClient) Delete(_ context.Context, k string) error           { delete(m.data, k); return nil }
func (m *memClient) Batch(context.Context, ...*storage.Operation) error { return nil }
func (m *memClient) Close(context.Context) error                        { return nil }

// Repeats of a finding are one finding (count, first and last seen, the
// newest raise's saving); the oldest is dropped past max_findings; a
// decision loaded from storage applies to a finding raised after it.
func TestFindingsMergeBoundAndDecisions(t *testing.T) {
	st := New(10, 2)
	finding := func(hwID string, at time.Time, saving float64) plog.Logs {
		ld := plog.NewLogs()
		record(ld, hwID, s.EventFinding, at, map[string]any{s.AttrFindingKind: s.FindingRightsizing, s.AttrFindingSavingMonth: saving})
		return ld
	}
	st.Consume(finding("GPU-1", t0, 100))
	st.Consume(finding("GPU-1", t0.Add(time.Hour), 120))
	fs := st.Snapshot().Findings
	require.Len(t, fs, 1)
	require.Equal(t, 2, fs[0].Count)
	require.Equal(t, t0, fs[0].FirstSeen)
	require.Equal(t, t0.Add(time.Hour), fs[0].LastSeen)
	require.Equal(t, 120.0, fs[0].MonthlySaving)

	st.Consume(finding("GPU-2", t0.Add(2*time.Hour), 1))
	st.Consume(finding("GPU-3", t0.Add(3*time.Hour), 1))
	ids := map[string]bool{}
	for _, f := range st.Snapshot().Findings {
		ids[f.DeviceID] = true
	}
	require.Equal(t, map[string]bool{"GPU-2": true, "GPU-3": true}, ids, "GPU-1's finding, seen longest ago, was dropped")

	// A new store over a record of decisions: GPU-4's finding, raised
	// later, starts dismissed.
	id4 := FindingID(s.FindingRightsizing, &fleet.Identity{HWID: "GPU-4", Node: "n1"})
	data, err := json.Marshal(map[string]Decision{id4: {State: fleet.StateDismissed, ChangedAt: t0}})
	require.NoError(t, err)
	next := New(10, 10)
	client := &memClient{data: map[string][]byte{statesKey: data}}
	require.NoError(t, next.UseStorage(context.Background(), client))
	next.Consume(finding("GPU-4", t0.Add(time.Hour), 5))
	fs = next.Snapshot().Findings
	require.Len(t, fs, 1)
	require.Equal(t, fleet.StateDismissed, fs[0].State)

	// A broken record is an error naming it.
	broken := New(10, 10)
	require.ErrorContains(t, broken.UseStorage(context.Background(), &memClient{data: map[string][]byte{statesKey: []byte("{")}}), statesKey)
}
