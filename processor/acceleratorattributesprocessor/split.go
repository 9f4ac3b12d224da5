package acceleratorattributesprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// splitShared handles a device that several consumers share (time slicing,
// MPS, a shared DRA claim, shares from the mapping file), or that one
// consumer holds only part of.
//
// The device's own resource stays, once, as the receiver sent it: it keeps
// every reading that describes the device as a whole (power, temperatures,
// clocks, errors, device-wide utilization and memory), so a plain sum over
// the output counts the device once (accelschema.CountedPerDevice). It
// names no holder and stands for the share no workload holds
// (devicePart). Each consumer gets a copy with its identity, share and
// partition, hw.parent naming the physical device, its allocation series
// (putAllocation: the copy exists, and names its holder, even when nothing
// was measured for it) and only the points measured for it
// (routeMeasured); the device's readings are never copied, because nothing
// can split them by share. Copies are appended to rms, after
// the resources the caller iterates over.
func (p *attributesProcessor) splitShared(rms pmetric.ResourceMetricsSlice, dev pmetric.ResourceMetrics, e *index.Entry, ix *index.Index) {
	attrs := dev.Resource().Attributes()
	base := baseShare(attrs)
	physical := physicalDevice(attrs)
	t := batchTime(dev)
	copies := make([]consumerCopy, 0, len(e.Copies))
	for i := range e.Copies {
		c := &e.Copies[i]
		if !heldForWorkload(c) {
			continue
		}
		rm := rms.AppendEmpty()
		rm.SetSchemaUrl(dev.SchemaUrl())
		ca := rm.Resource().Attributes()
		attrs.CopyTo(ca)
		applyHolder(ca, c, base, ix.NodeAttrs)
		ca.PutStr(accelschema.AttrHWParent, physical)
		copies = append(copies, consumerCopy{consumer: c.Consumer, rm: rm, share: base * c.Share})
	}
	left, state := devicePart(e)
	clearHolder(attrs)
	attrs.PutStr(accelschema.AttrAllocationState, state)
	attrs.PutDouble(accelschema.AttrPartitionShare, base*left)
	insertAll(attrs, ix.NodeAttrs)
	if len(copies) > 0 {
		p.routeMeasured(dev, copies)
	}
	// Every copy exists with its holding, measured points or not; the
	// device's own resource is a holding only for what the consumers leave.
	for i := range copies {
		p.putAllocation(copies[i].rm, holding{share: copies[i].share, holder: true}, t)
	}
	p.putAllocation(dev, holding{share: base * left}, t)
}

// heldForWorkload: the holding is a workload's, and gets a copy of its own.
// Neither the unheld remainder nor a scheduler's placeholder does.
func heldForWorkload(c *index.Copy) bool {
	return c.Consumer != nil && !c.Consumer.Placeholder
}

// devicePart is what the device's own resource of a shared device stands
// for: the part of its share no workload holds (what nobody holds, and what
// a placeholder holds), and its allocation state — reserved when a
// placeholder holds some of it, unallocated when something is left,
// allocated when the workloads hold it all (share 0: it carries the
// device's readings, not money).
func devicePart(e *index.Entry) (left float64, state string) {
	reserved := false
	for i := range e.Copies {
		c := &e.Copies[i]
		if heldForWorkload(c) {
			continue
		}
		left += c.Share
		reserved = reserved || c.Consumer != nil
	}
	switch {
	case reserved:
		return left, accelschema.AllocationReserved
	case left > 0:
		return left, accelschema.AllocationUnallocated
	default:
		return 0, accelschema.AllocationAllocated
	}
}

// physicalDevice is the hw.id of the physical device a resource belongs to:
// a MIG instance's GPU, else the device itself. A copy of a shared MIG
// instance is, like the instance, a partition of its GPU.
func physicalDevice(attrs pcommon.Map) string {
	if parent := strAttr(attrs, accelschema.AttrHWParent); parent != "" {
		return parent
	}
	return strAttr(attrs, accelschema.AttrHWID)
}
