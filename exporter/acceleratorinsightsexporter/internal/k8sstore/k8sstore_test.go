package k8sstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func replicasAt(at time.Time, zone string, n int64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	r := rm.Resource().Attributes()
	r.PutStr(s.AttrK8sNamespaceName, "llm")
	r.PutStr(s.AttrWorkloadName, "vllm")
	r.PutStr(s.AttrCloudZone, zone)
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName(s.MetricWorkloadReplicas)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
	dp.SetIntValue(n)
	return md
}

func coldStartHist(at time.Time, count uint64, sum float64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(s.AttrWorkloadName, "vllm")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName(s.MetricColdStartDuration)
	dp := m.SetEmptyHistogram().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
	dp.Attributes().PutStr(s.AttrColdStartPhase, s.PhaseTotal)
	dp.SetCount(count)
	dp.SetSum(sum)
	return md
}

func scalingAt(at time.Time, to int64) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(s.AttrWorkloadName, "vllm")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(at))
	lr.Attributes().PutStr(s.AttrEventName, s.EventScaling)
	lr.Attributes().PutInt(s.AttrScalingTo, to)
	return ld
}

// Records are bounded (the newest kept, newest first); series not seen
// within the expiry leave; a late, older histogram point does not replace
// a newer one; other metrics and records are ignored.
func TestBoundsExpiryAndOrder(t *testing.T) {
	st := New(3, 10*time.Minute)
	now := t0
	st.SetClock(func() time.Time { return now })
	for i := range 5 {
		st.ConsumeLogs(scalingAt(t0.Add(time.Duration(i)*time.Second), int64(i)))
	}
	snap := st.Snapshot()
	require.Len(t, snap.Scalings, 3)
	assert.Equal(t, []int64{4, 3, 2}, []int64{snap.Scalings[0].To, snap.Scalings[1].To, snap.Scalings[2].To})

	st.ConsumeMetrics(coldStartHist(t0, 4, 400))
	st.ConsumeMetrics(coldStartHist(t0.Add(-time.Minute), 2, 100))
	snap = st.Snapshot()
	require.Len(t, snap.Phases, 1)
	assert.Equal(t, uint64(4), snap.Phases[0].Phases[0].Count)
	assert.Equal(t, 100.0, *snap.Phases[0].Phases[0].Mean)

	st.ConsumeMetrics(replicasAt(t0, "a", 2))
	st.ConsumeMetrics(replicasAt(t0.Add(-9*time.Minute), "b", 1))
	assert.Equal(t, map[string]int64{"a": 2, "b": 1}, st.Snapshot().Zones[0].Zones)
	now = t0.Add(5 * time.Minute)
	assert.Equal(t, map[string]int64{"a": 2}, st.Snapshot().Zones[0].Zones, "b not seen for 14 minutes")
	now = t0.Add(11 * time.Minute)
	snap = st.Snapshot()
	assert.Empty(t, snap.Zones)
	assert.Empty(t, snap.Phases)
	assert.Len(t, snap.Scalings, 3, "records are bounded by count, not age")

	other := pmetric.NewMetrics()
	other.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().SetName("hw.gpu.utilization")
	st.ConsumeMetrics(other)
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Attributes().PutStr(s.AttrEventName, s.EventFinding)
	lr.Attributes().PutStr(s.AttrFindingKind, "rightsizing")
	st.ConsumeLogs(ld)
	assert.Empty(t, st.Snapshot().Findings, "cost findings are the logstore's")
}

// Findings are bounded too: the one last seen longest ago goes.
func TestFindingsBounded(t *testing.T) {
	st := New(2, time.Hour)
	for i := range 3 {
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr(s.AttrWorkloadName, fmt.Sprintf("w%d", i))
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(i) * time.Minute)))
		lr.Attributes().PutStr(s.AttrEventName, s.EventFinding)
		lr.Attributes().PutStr(s.AttrFindingKind, s.FindingLatencyRegression)
		lr.Attributes().PutStr(s.AttrFindingCause, s.CauseQueueing)
		st.ConsumeLogs(ld)
	}
	fs := st.Snapshot().Findings
	require.Len(t, fs, 2)
	assert.Equal(t, "w2", fs[0].Name)
	assert.Equal(t, "w1", fs[1].Name)
}
