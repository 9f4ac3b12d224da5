package acceleratorcostprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/metadata"
)

// metricDefs are the registry entries of the metrics this processor emits:
// names, units and descriptions come from internal/accelschema only.
var metricDefs = func() (defs [4]s.MetricDef) {
	for i, name := range []string{s.MetricPrice, s.MetricCost, s.MetricWaste, s.MetricFindings} {
		defs[i] = s.MustMetric("accelerator_cost", name)
	}
	return defs
}()

func describe(m pmetric.Metric, d *s.MetricDef) {
	m.SetName(d.Name)
	m.SetUnit(d.Unit)
	m.SetDescription(d.Brief)
}

// emit appends this processor's scope to the resource: the price now, and
// the cumulative cost, waste by reason and findings by kind since the
// resource was first seen. Every reason and kind is emitted from the start,
// zeros included, so that rates over them are right from the first increase.
func (p *costProcessor) emit(rm pmetric.ResourceMetrics, st *resourceState, price float64, t pcommon.Timestamp) {
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	sm.Scope().SetVersion(p.version)
	ms := sm.Metrics()
	ms.EnsureCapacity(4)
	end := st.lastT

	m := ms.AppendEmpty()
	describe(m, &metricDefs[0])
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(t)
	dp.SetDoubleValue(price)

	m = ms.AppendEmpty()
	describe(m, &metricDefs[1])
	sum := cumulative(m)
	dp = sum.DataPoints().AppendEmpty()
	dp.SetStartTimestamp(st.firstT)
	dp.SetTimestamp(end)
	dp.SetDoubleValue(st.cost)

	m = ms.AppendEmpty()
	describe(m, &metricDefs[2])
	dps := cumulative(m).DataPoints()
	dps.EnsureCapacity(numWasteReasons)
	for i, reason := range wasteReasons {
		dp := dps.AppendEmpty()
		dp.SetStartTimestamp(st.firstT)
		dp.SetTimestamp(end)
		dp.SetDoubleValue(st.waste[i])
		dp.Attributes().PutStr(s.AttrWasteReason, reason)
	}

	m = ms.AppendEmpty()
	describe(m, &metricDefs[3])
	dps = cumulative(m).DataPoints()
	dps.EnsureCapacity(numFindingKinds)
	for i, kind := range findingKinds {
		dp := dps.AppendEmpty()
		dp.SetStartTimestamp(st.firstT)
		dp.SetTimestamp(end)
		dp.SetIntValue(st.findings[i])
		dp.Attributes().PutStr(s.AttrFindingKind, kind)
	}
}

func cumulative(m pmetric.Metric) pmetric.Sum {
	sum := m.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	return sum
}
