package acceleratorcostprocessor

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/mig"
	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
)

// ownShare is the part of the physical device a resource stands for, before
// the shares of one device are fitted together (layoutAt): NeuronCores by the
// table's cores per device; otherwise the share the receiver or attributes
// processor set; a MIG instance without one by its profile; everything else
// 1. A device-level copy the attributes processor typed neuroncore is not a
// core: it keeps the share it was given.
func (p *costProcessor) ownShare(id *identity, row pricing.Row, match pricing.Match) float64 {
	if id.partType == s.PartitionNeuronCore && !id.deviceLevel() && match != pricing.NoMatch && row.CoresPerAccelerator > 0 {
		return 1 / float64(row.CoresPerAccelerator)
	}
	if id.hasShare {
		return id.share
	}
	if isMIG(id.partType) {
		if prof, err := mig.ParseProfile(id.profile); err == nil {
			return prof.Share(gpuMemoryGB(row, match, id.model))
		}
	}
	return 1
}

// gpuMemoryGB is the memory of the whole GPU, for MIG arithmetic: the price
// row's, else what the model name says.
func gpuMemoryGB(row pricing.Row, match pricing.Match, model string) float64 {
	if match != pricing.NoMatch && row.AcceleratorMemoryGB > 0 {
		return row.AcceleratorMemoryGB
	}
	return mig.MemoryGBFromModel(model)
}

// pricedShare is the part of the physical device a resource is priced at at
// t, the part of that which is fragmentation, and whether the resource
// stands for its partitions' remainder.
//
// A device-level resource whose partitions are reported too (a Neuron
// device and its cores, a GPU and its MIG instances, a shared GPU and its
// consumers' copies) stands only for what the partitions do not cover,
// whatever partition type or share an upstream processor gave it: exactly
// one level carries the money, and the shares of the device add up to 1.
// A partition is priced at its own share, scaled to fit its device.
func (p *costProcessor) pricedShare(id *identity, row pricing.Row, match pricing.Match, t pcommon.Timestamp) (share, fragmentation float64, remainder bool) {
	var lay layout
	if id.deviceLevel() {
		if ps := p.parents[id.hwID]; ps != nil && len(ps.children) > 0 {
			if lay = p.layoutAt(ps, t); lay.n > 0 {
				remainder = true
			}
		}
	}
	switch {
	case remainder:
		share = lay.remainder
		if lay.remainder > 0 {
			fragmentation = lay.fragRemainder / lay.remainder
		}
	default:
		share = p.ownShare(id, row, match)
		if parent := id.partitionOf(); parent != "" {
			if ps := p.parents[parent]; ps != nil {
				l := p.layoutAt(ps, t)
				share *= l.scale
				if isMIG(id.partType) && l.fragExcess > 0 && l.sumShares > 0 {
					fragmentation = l.fragExcess / l.sumShares
				}
			}
		}
	}
	return share, fragmentation, remainder
}

// layoutAt is the parent's partitions in the scrape at t. Children whose
// last data point is older than half a scrape interval (or, before the
// interval is known, max_interval) are gone. When the partitions' own
// shares add up to more than the device (MIG instances priced by
// max(compute, memory) each, shares from sources that disagree), they are
// all scaled by the same factor (mig.FitFactor), so that the partitions of
// one device never cost more than the device.
func (p *costProcessor) layoutAt(ps *parentState, t pcommon.Timestamp) layout {
	if ps.cacheBatch == p.batch && ps.cacheT == t {
		return ps.cache
	}
	tol := pcommon.Timestamp(p.cfg.MaxInterval)
	if ps.interval > 0 {
		tol = min(tol, ps.interval/2)
	}
	l := layout{scale: 1}
	profiles := ps.profiles[:0]
	for _, c := range ps.children {
		if c.lastT+tol < t {
			continue
		}
		l.n++
		l.sumShares += c.share
		if c.mig {
			l.hasMIG = true
			if c.parsed.Name != "" {
				profiles = append(profiles, c.parsed)
			}
		}
	}
	ps.profiles = profiles
	l.scale = mig.FitFactor(l.sumShares)
	l.sumShares *= l.scale
	l.remainder = math.Max(0, 1-l.sumShares)
	if l.hasMIG {
		l.stranded = mig.Stranded(profiles, ps.memoryGB)
		l.fragRemainder = math.Min(l.stranded, l.remainder)
		l.fragExcess = l.stranded - l.fragRemainder
	}
	ps.cache, ps.cacheBatch, ps.cacheT = l, p.batch, t
	return l
}

// setShare makes the resource's accelerator.partition.share the share it is
// priced at, so that price = device price × share holds for every exported
// resource: a device-level resource standing for its partitions' remainder,
// partitions scaled to fit their device. A missing share that is 1 stays
// missing (missing means 1).
func setShare(attrs pcommon.Map, share float64) {
	if v, ok := attrs.Get(s.AttrPartitionShare); ok {
		if cur, ok := shareValue(v); ok && math.Abs(cur-share) <= shareTolerance {
			return
		}
	} else if math.Abs(share-1) <= shareTolerance {
		return
	}
	attrs.PutDouble(s.AttrPartitionShare, share)
}

// shareValue reads accelerator.partition.share, which sources may send as
// a double or an int; false for any other type.
func shareValue(v pcommon.Value) (float64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return v.Double(), true
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	}
	return 0, false
}

// shareTolerance: shares this close are the same share (float rounding).
const shareTolerance = 1e-12
