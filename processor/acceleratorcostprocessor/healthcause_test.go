package acceleratorcostprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// sendWithXIDs sends one batch whose resources carry, besides their other
// metrics, hw.errors{error.type=xid} counts as the dcgm receiver emits them.
func (h *harness) sendWithXIDs(t pcommon.Timestamp, xids map[int]int64, rs ...resource) {
	h.t.Helper()
	h.clock = h.clock.Add(time.Second)
	md := batch(t, rs...)
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		m := md.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics().AppendEmpty()
		m.SetName(s.MetricErrors)
		sum := m.SetEmptySum()
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		sum.SetIsMonotonic(true)
		for code, n := range xids {
			dp := sum.DataPoints().AppendEmpty()
			dp.SetTimestamp(t)
			dp.SetIntValue(n)
			dp.Attributes().PutStr(s.AttrErrorType, s.ErrorXID)
			dp.Attributes().PutInt(s.AttrXID, int64(code))
		}
	}
	require.NoError(h.t, h.metrics.ConsumeMetrics(context.Background(), md))
}

// A failed GPU whose health event never reaches the processor (or comes
// after the one interval the finding waits for it): the finding's action is
// the one internal/xid gives the XID its hw.errors counted, the action the
// event would have carried, not "contact support". XID 48 on an A100 is the
// demo's failed GPU.
func TestUnhealthyFindingTakesTheActionOfTheXIDItsMetricsCounted(t *testing.T) {
	h := newHarness(t, testConfig())
	dev := func(state string) resource {
		return gpu("GPU-48", held("job", s.WorkloadBatch, s.MetricStatus, state, s.MetricGREngineActive, 0.5)...)
	}
	// An application XID before the failure (restart_app, hw.state ok)
	// is no cause of it.
	h.sendWithXIDs(at(0), map[int]int64{31: 1}, dev(s.HWStateOK))
	for i := 1; i <= 3; i++ {
		h.sendWithXIDs(at(time.Duration(i)*minute), map[int]int64{31: 1, 48: 1}, dev(s.HWStateFailed))
	}
	fs := h.findingsFor("GPU-48")
	require.Len(t, fs, 1)
	checkFinding(t, fs[0], wantFinding{kind: s.FindingUnhealthyCapacity, target: s.ActionDrainAndReset, healthAction: s.ActionDrainAndReset,
		saving: 730, evidence: []string{"hw.state=failed", "failure_mode=" + s.FailureModeMemory, "xid=48"},
		actionHas: "drain_and_reset: drain the node's workloads from the GPU, then reset it (XID 48, Double-bit ECC error"})
	if v, _ := fs[0].Attributes().Get(s.AttrHealthFailureMode); v.Str() != s.FailureModeMemory {
		t.Errorf("failure mode %q, want %q", v.Str(), s.FailureModeMemory)
	}
}

// Counts are events, not states: an XID counted while the device was still
// well, that did not grow when it failed, does not say why it failed.
func TestUnhealthyFindingIgnoresXIDsCountedBeforeTheFailure(t *testing.T) {
	h := newHarness(t, testConfig())
	dev := func(state string) resource {
		return gpu("GPU-old", held("job", s.WorkloadBatch, s.MetricStatus, state, s.MetricGREngineActive, 0.5)...)
	}
	h.sendWithXIDs(at(0), map[int]int64{79: 1}, dev(s.HWStateOK))
	for i := 1; i <= 3; i++ {
		h.sendWithXIDs(at(time.Duration(i)*minute), map[int]int64{79: 1}, dev(s.HWStateFailed))
	}
	fs := h.findingsFor("GPU-old")
	require.Len(t, fs, 1)
	checkFinding(t, fs[0], wantFinding{kind: s.FindingUnhealthyCapacity, target: s.ActionContactSupport, healthAction: s.ActionContactSupport,
		saving: 730, evidence: []string{"hw.state=failed"}, actionHas: "contact_support"})
}
