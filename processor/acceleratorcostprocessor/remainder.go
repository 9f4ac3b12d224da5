package acceleratorcostprocessor

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
)

// remainderID marks the resource this processor emits for the unpartitioned
// capacity of a MIG-enabled GPU that has no resource of its own.
const remainderID = "unpartitioned"

// deviceLevelAttributes are copied from a MIG instance to its GPU's
// remainder resource: what describes the device and the node, not who holds
// the instance.
var deviceLevelAttributes = []string{
	s.AttrHWType, s.AttrHWVendor, s.AttrHWModel, s.AttrHWDriverVersion, s.AttrKind, s.AttrDeviceIndex,
	s.AttrPCIBusID, s.AttrHostName, s.AttrHostID, s.AttrHostType, s.AttrCloudProvider, s.AttrCloudRegion,
	s.AttrCloudZone, s.AttrK8sClusterName, s.AttrK8sNodeName,
}

func copyDeviceAttributes(from, to pcommon.Map, cfg *Config) {
	keys := make([]string, 0, len(deviceLevelAttributes)+len(cfg.HostTypeAttributes)+len(cfg.RegionAttributes))
	keys = append(append(append(keys, deviceLevelAttributes...), cfg.HostTypeAttributes...), cfg.RegionAttributes...)
	for _, k := range keys {
		if v, ok := from.Get(k); ok {
			v.CopyTo(to.PutEmpty(k))
		}
	}
}

// emitRemainders adds, for each MIG-enabled GPU seen in this batch that has
// no resource of its own, a resource for its unpartitioned capacity: the
// part of the device price no MIG instance pays for, as unallocated and
// fragmentation waste. Without it a GPU's costs would not add up to its
// price.
func (p *costProcessor) emitRemainders(md pmetric.Metrics, now time.Time) {
	table := p.prices.Load().Table()
	for _, ps := range p.touched {
		if ps.template.Len() == 0 || now.Sub(ps.ownSeen) <= p.cfg.MaxInterval {
			continue
		}
		t := ps.lastChildT
		lay := p.layoutAt(ps, t)
		if !lay.hasMIG || lay.remainder <= 1e-9 {
			continue
		}
		var id identity
		id.hostType = firstString(ps.template, p.cfg.HostTypeAttributes)
		id.region = firstString(ps.template, p.cfg.RegionAttributes)
		model, _ := ps.template.Get(s.AttrHWModel)
		row, match := table.Lookup(id.hostType, id.region, model.Str())
		if match == pricing.NoMatch {
			continue
		}
		st := ps.remainder
		if st == nil || math.Abs(st.share-lay.remainder) > 1e-9 {
			// A new layout is a new series: its share is part of its identity.
			st = &resourceState{attrs: pcommon.NewMap(), firstT: t, share: lay.remainder}
			ps.template.CopyTo(st.attrs)
			st.attrs.PutStr(s.AttrHWID, ps.id)
			st.attrs.PutStr(s.AttrPartitionType, s.PartitionMIG)
			st.attrs.PutStr(s.AttrPartitionID, remainderID)
			st.attrs.PutDouble(s.AttrPartitionShare, lay.remainder)
			st.attrs.PutStr(s.AttrAllocationState, s.AllocationUnallocated)
			st.id = identity{hwID: ps.id, partType: s.PartitionMIG, partID: remainderID}
			ps.remainder = st
		}
		st.seen = now
		devicePrice := row.AcceleratorHourly()
		price := devicePrice * lay.remainder
		dt := p.elapsed(st.lastT, t)
		unavailable, _ := p.unavailable(&st.id, t)
		waste := splitWaste(interval{
			cost: price * dt.Hours(), unavailable: unavailable,
			fragmentation: lay.fragRemainder / lay.remainder,
		}, &p.cfg.Waste)
		st.cost += price * dt.Hours()
		for i := range waste {
			st.waste[i] += waste[i]
		}
		st.devicePrice = devicePrice
		st.lastT = max(st.lastT, t)
		rm := md.ResourceMetrics().AppendEmpty()
		st.attrs.CopyTo(rm.Resource().Attributes())
		p.emit(rm, st, price, t)
	}
}
