package acceleratorattributesprocessor

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// processMetrics enriches device resources in place, or, for a shared
// device, keeps the device's resource and adds one copy per consumer
// (splitShared), and gives inference resources their pod's team and
// workload. Every holding it attributes gets the allocation series
// (putAllocation), so who holds what is visible without another processor.
// The work is per resource: data points are only touched on a shared
// device, and only those measured per process or per pod.
func (p *attributesProcessor) processMetrics(_ context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	rms := md.ResourceMetrics()
	p.learn(rms)
	fitMIGShares(rms)
	ix := p.idx.Load()
	topo := p.topo.current()
	// Copies are appended after the batch's own resources: only those are
	// visited.
	n := rms.Len()
	var unplaced unplacedMIG
	pigeonhole := ix.UnplacedMIG() > 0
	for i := 0; i < n; i++ {
		rm := rms.At(i)
		attrs := rm.Resource().Attributes()
		id, isDevice := identityOf(attrs)
		if !isDevice {
			p.enrichPodResource(ix, attrs)
			continue
		}
		e, outcome := ix.Lookup(id)
		// A MIG series nothing places takes part in the pigeonhole rule
		// whether or not a claim hint then names its holders: a held one
		// resolved through its claim accounts for one unplaced device as a
		// pod hint does, or the un-hinted series could never be settled.
		unplacedSeries := pigeonhole && outcome == index.Unknown && isMIGSeries(id)
		if outcome == index.Unknown {
			if claim, ok := claimHint(ix, attrs); ok {
				p.requestRefresh(id.HWID) // the sources may resolve it next time
				e, outcome = claim, index.Held
				if unplacedSeries {
					unplaced.observeClaim(ix, id.HWID, claim)
					unplacedSeries = false
				}
			}
		}
		if outcome == index.Held && e.Shared() {
			p.splitShared(rms, rm, e, ix)
			continue
		}
		p.enrichDevice(ix, attrs, id, e, outcome)
		if unplacedSeries {
			unplaced.observe(ix, attrs)
		}
		if outcome != index.Derived && !hasPartitions(topo, id) {
			if h, ok := holdingOf(attrs); ok {
				p.putAllocation(rm, h, batchTime(rm))
			}
		}
	}
	unplaced.settle(ix)
	return md, nil
}

// enrichDevice handles a device resource that is not copied: held whole by
// one holder, unallocated, a MIG-enabled GPU, or unknown.
func (p *attributesProcessor) enrichDevice(ix *index.Index, attrs pcommon.Map, id index.Identity, e *index.Entry, outcome index.Outcome) {
	switch outcome {
	case index.Held:
		if c := &e.Copies[0]; c.Consumer.Placeholder {
			markReserved(attrs, ix.NodeAttrs)
		} else {
			applyHolder(attrs, c, baseShare(attrs), ix.NodeAttrs)
		}
	case index.Unallocated:
		clearHolder(attrs)
		attrs.PutStr(accelschema.AttrAllocationState, accelschema.AllocationUnallocated)
		insertAll(attrs, ix.NodeAttrs)
		if !ix.Known(id) {
			p.requestRefresh(id.HWID)
		}
	case index.Derived:
		attrs.PutStr(accelschema.AttrAllocationState, e.State)
		insertAll(attrs, ix.NodeAttrs)
	default:
		insertAll(attrs, ix.NodeAttrs)
		p.useHints(ix, attrs)
		p.requestRefresh(id.HWID)
	}
}

// useHints checks the pod dcgm-exporter named on a device the sources could
// not resolve: a pod on this node gets its team and workload; a pod that is
// not here is a stale hint and is removed.
func (p *attributesProcessor) useHints(ix *index.Index, attrs pcommon.Map) {
	ns, name := strAttr(attrs, accelschema.AttrK8sNamespaceName), strAttr(attrs, accelschema.AttrK8sPodName)
	if ns == "" || name == "" {
		return
	}
	if pod, ok := ix.PodByName(ns, name); ok {
		if pod.Placeholder {
			markReserved(attrs, ix.NodeAttrs)
			return
		}
		container := strAttr(attrs, accelschema.AttrK8sContainerName)
		clearHolder(attrs)
		putAll(attrs, pod.Attrs)
		if container != "" {
			attrs.PutStr(accelschema.AttrK8sContainerName, container)
		}
		attrs.PutStr(accelschema.AttrAllocationState, accelschema.AllocationAllocated)
		return
	}
	// Not in the last answer: it may have just started, so ask the kubelet
	// for it; meanwhile a hint the sources contradict is not passed on.
	p.requestPod(ns, name)
	if onNode, known := ix.PodOnNode(ns, name); known && !onNode {
		p.rl.Debug("stale-hint/"+ns+"/"+name, "accelerator_attributes: dropping a pod hint for a pod that is not on this node",
			zap.String("k8s.namespace.name", ns), zap.String("k8s.pod.name", name))
		clearHolder(attrs)
	}
}

// enrichPodResource gives a resource that names a pod (an inference
// server's) the pod's attributes, and the node's.
func (p *attributesProcessor) enrichPodResource(ix *index.Index, attrs pcommon.Map) {
	var pod *index.Pod
	if uid := strAttr(attrs, accelschema.AttrK8sPodUID); uid != "" {
		pod, _ = ix.PodByUID(uid)
	}
	if pod == nil {
		ns, name := strAttr(attrs, accelschema.AttrK8sNamespaceName), strAttr(attrs, accelschema.AttrK8sPodName)
		if ns == "" || name == "" {
			return
		}
		pod, _ = ix.PodByName(ns, name)
	}
	if pod == nil {
		return
	}
	putAll(attrs, pod.Attrs)
	insertAll(attrs, ix.NodeAttrs)
}

// claimHint finds the holders of the DRA claim dcgm-exporter names on a
// device (accelerator.dra.claim.namespace/name, and the result's
// driver/pool/device) when the processor's own sources cannot say who
// holds the device (no ResourceSlice for it yet, DRA watches off): the
// claim's pods on this node, as the index knows them, are used as a pod
// hint's pod is.
func claimHint(ix *index.Index, attrs pcommon.Map) (*index.Entry, bool) {
	ns, name := strAttr(attrs, accelschema.AttrDRAClaimNamespace), strAttr(attrs, accelschema.AttrDRAClaimName)
	if ns == "" || name == "" {
		return nil, false
	}
	device := ""
	if driver, pool, dev := strAttr(attrs, accelschema.AttrDRADriver), strAttr(attrs, accelschema.AttrDRAPool), strAttr(attrs, accelschema.AttrDRADevice); driver != "" && pool != "" && dev != "" {
		device = driver + "/" + pool + "/" + dev
	}
	return ix.ClaimHolders(ns, name, device)
}
