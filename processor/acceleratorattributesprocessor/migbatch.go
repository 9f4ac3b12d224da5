package acceleratorattributesprocessor

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/mig"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// fitMIGShares makes the MIG instances of each GPU in the batch add up to at
// most one GPU (mig.FitFactor). The dcgm receiver already fits the layouts
// it reports, but other sources (a receiver of another distribution, a
// static mapping, NVML and dcgm-exporter ids of one GPU in one batch) may
// not, and an instance on its own is worth max(compute/7, memory/8), which
// over-books layouts such as 3g.40gb + 4g.40gb (15/14 of an H100). A batch
// carries a node's whole scrape, so it sees every instance of a GPU. The
// fitted share is written back before holders are applied, so copies split
// the fitted share and the cost processor prices what the resource says.
// An instance reported by two sources counts once.
func fitMIGShares(rms pmetric.ResourceMetricsSlice) {
	type gpu struct {
		total   float64
		counted map[string]bool
		members []pcommon.Map
	}
	var gpus map[string]*gpu
	for i := 0; i < rms.Len(); i++ {
		attrs := rms.At(i).Resource().Attributes()
		if strAttr(attrs, accelschema.AttrPartitionType) != accelschema.PartitionMIG {
			continue
		}
		parent := strAttr(attrs, accelschema.AttrHWParent)
		if parent == "" {
			continue
		}
		if gpus == nil {
			gpus = map[string]*gpu{}
		}
		g := gpus[parent]
		if g == nil {
			g = &gpu{counted: map[string]bool{}}
			gpus[parent] = g
		}
		key := strAttr(attrs, accelschema.AttrHWID)
		if gi := intAttr(attrs, accelschema.AttrMIGGPUInstanceID); gi >= 0 {
			key = "gi" + strconv.Itoa(gi)
		}
		g.members = append(g.members, attrs)
		if !g.counted[key] {
			g.counted[key] = true
			g.total += baseShare(attrs)
		}
	}
	for _, g := range gpus {
		f := mig.FitFactor(g.total)
		if f >= 1 {
			continue
		}
		for _, attrs := range g.members {
			attrs.PutDouble(accelschema.AttrPartitionShare, baseShare(attrs)*f)
		}
	}
}

// unplacedMIG applies the pigeonhole rule to dcgm-exporter MIG series that
// the sources cannot place. Without NVML nothing maps a <parent>/gi<N>
// series to the MIG UUID PodResources lists, but dcgm-exporter (Kubernetes
// mapping on, as the GPU Operator runs it) labels every series of a held
// device with its pod. So when the hinted, unplaced MIG series of a batch
// name pods that hold unplaced MIG devices, and there are as many of them
// as PodResources lists unplaced MIG devices held on this node, every held
// device is accounted for and the un-hinted series are unallocated. If the
// counts differ (the exporter's Kubernetes mapping is off, a series is
// missing from the batch, a hint names a pod that holds no such device),
// nothing is concluded and they stay as they are.
type unplacedMIG struct {
	hinted     map[string]bool // hw.id of hinted series
	unhinted   []pcommon.Map
	undecided  bool
	considered bool
}

// observe records one MIG series that Lookup could not place, after the
// hints were applied to it.
func (u *unplacedMIG) observe(ix *index.Index, attrs pcommon.Map) {
	u.considered = true
	pod := strAttr(attrs, accelschema.AttrK8sPodName)
	if pod == "" {
		u.unhinted = append(u.unhinted, attrs)
		return
	}
	if !ix.HoldsUnplacedMIG(strAttr(attrs, accelschema.AttrK8sNamespaceName), pod) {
		// A pod that holds no unplaced MIG device, or one not confirmed on
		// this node yet: the hints do not add up.
		u.undecided = true
		return
	}
	if u.hinted == nil {
		u.hinted = map[string]bool{}
	}
	u.hinted[strAttr(attrs, accelschema.AttrHWID)] = true
}

// observeClaim records one MIG series that Lookup could not place and
// that a DRA claim hint resolved to e: it is hinted when the claim's pods
// hold an unplaced MIG device, as a pod hint is.
func (u *unplacedMIG) observeClaim(ix *index.Index, hwID string, e *index.Entry) {
	u.considered = true
	if !ix.EntryHoldsUnplacedMIG(e) {
		// A claim whose pods hold no unplaced MIG device (a whole GPU's
		// claim named on a MIG series): the hints do not add up.
		u.undecided = true
		return
	}
	if u.hinted == nil {
		u.hinted = map[string]bool{}
	}
	u.hinted[hwID] = true
}

// settle marks the un-hinted series unallocated when the hinted ones
// account for every unplaced MIG device held on the node.
func (u *unplacedMIG) settle(ix *index.Index) {
	if !u.considered || u.undecided || len(u.unhinted) == 0 || len(u.hinted) != ix.UnplacedMIG() {
		return
	}
	for _, attrs := range u.unhinted {
		clearHolder(attrs)
		attrs.PutStr(accelschema.AttrAllocationState, accelschema.AllocationUnallocated)
	}
}

// isMIGSeries: the identity of a MIG instance (a GPU-instance id or a parent).
func isMIGSeries(id index.Identity) bool {
	return id.Kind == accelschema.KindNvidiaGPU && (id.GI >= 0 || id.Parent != "")
}
