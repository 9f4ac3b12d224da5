package acceleratorattributesprocessor

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/pmetricutil"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/metadata"
)

// allocationDef is the registry's allocation series: names who holds each
// device or partition, and what share, whatever else is in the pipeline
// (accelschema.CountedPerHolding).
var allocationDef = accelschema.MustMetric("accelerator_attributes", accelschema.MetricAllocationShare)

// holding is what one resource's allocation series says: the share it
// stands for, and whether a holder (a workload) is named on it.
type holding struct {
	share  float64
	holder bool
}

// putAllocation gives a resource its allocation series, one point at t: the
// share its holder holds. A resource that names nobody and stands for no
// share (a shared device's own resource when its consumers hold it all) is
// no holding and gets none. A series already there (an earlier
// accelerator_attributes in the path) is replaced, so one holding is never
// named twice.
func (p *attributesProcessor) putAllocation(rm pmetric.ResourceMetrics, h holding, t pcommon.Timestamp) {
	if !h.holder && h.share <= 0 {
		removeAllocation(rm)
		return
	}
	dps, ok := existingAllocation(rm)
	if !ok {
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(metadata.ScopeName)
		sm.Scope().SetVersion(p.version)
		m := sm.Metrics().AppendEmpty()
		m.SetName(allocationDef.Name)
		m.SetUnit(allocationDef.Unit)
		m.SetDescription(allocationDef.Brief)
		dps = m.SetEmptyGauge().DataPoints()
	}
	dps.RemoveIf(func(pmetric.NumberDataPoint) bool { return true })
	dp := dps.AppendEmpty()
	dp.SetTimestamp(t)
	dp.SetDoubleValue(h.share)
}

// existingAllocation finds the points of an allocation series the resource
// already carries.
func existingAllocation(rm pmetric.ResourceMetrics) (pmetric.NumberDataPointSlice, bool) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			if m := ms.At(j); m.Name() == allocationDef.Name && m.Type() == pmetric.MetricTypeGauge {
				return m.Gauge().DataPoints(), true
			}
		}
	}
	return pmetric.NumberDataPointSlice{}, false
}

// removeAllocation drops an allocation series an earlier processor gave a
// resource that is no holding any more.
func removeAllocation(rm pmetric.ResourceMetrics) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		sms.At(i).Metrics().RemoveIf(func(m pmetric.Metric) bool { return m.Name() == allocationDef.Name })
	}
	sms.RemoveIf(func(sm pmetric.ScopeMetrics) bool {
		return sm.Scope().Name() == metadata.ScopeName && sm.Metrics().Len() == 0
	})
}

// holdingOf reads the holding an enriched device resource stands for: its
// share (missing means 1), and whether it names its holder. False when
// nothing says whether anyone holds it (no allocation state: the sources
// could not resolve the device).
func holdingOf(attrs pcommon.Map) (holding, bool) {
	state := strAttr(attrs, accelschema.AttrAllocationState)
	if state == "" {
		return holding{}, false
	}
	share := 1.0
	if v, ok := attrs.Get(accelschema.AttrPartitionShare); ok {
		switch v.Type() {
		case pcommon.ValueTypeDouble:
			share = v.Double()
		case pcommon.ValueTypeInt:
			share = float64(v.Int())
		}
	}
	named := false
	if state == accelschema.AllocationAllocated {
		attrs.Range(func(k string, _ pcommon.Value) bool {
			named = holderKeys[k]
			return !named
		})
	}
	return holding{share: share, holder: named}, true
}

// hasPartitions: the device's partitions are reported as resources of
// their own (a MIG-enabled GPU's instances, a Neuron device's cores), so
// they are the holdings and the device's own resource is none.
func hasPartitions(topo *index.Topology, id index.Identity) bool {
	if id.Parent != "" {
		return false
	}
	if id.Kind == accelschema.KindAWSNeuron {
		return id.CoreIndex < 0 && id.DeviceIndex >= 0 && len(topo.NeuronCores[id.DeviceIndex]) > 0
	}
	return len(topo.MIGParents[id.HWID]) > 0
}

// batchTime is the latest time of the resource's points: the allocation
// series is stamped with the scrape it describes (the cost processor prices
// a copy at its points' time), or now when the resource has none.
func batchTime(rm pmetric.ResourceMetrics) pcommon.Timestamp {
	var latest pcommon.Timestamp
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			latest = max(latest, pmetricutil.LatestTimestamp(ms.At(j)))
		}
	}
	if latest == 0 {
		return pcommon.NewTimestampFromTime(time.Now())
	}
	return latest
}
