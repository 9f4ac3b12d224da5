package acceleratorattributesprocessor

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/cgroup"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// processMetrics enriches device resources in place, or replaces a shared
// device's resource with one copy per holder (plus the unallocated rest),
// and gives inference resources their pod's team and workload. The work is
// per resource: data points are only touched when a shared device's
// resource is copied.
func (p *attributesProcessor) processMetrics(_ context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	rms := md.ResourceMetrics()
	p.learn(rms)
	fitMIGShares(rms)
	ix := p.idx.Load()
	n := rms.Len()
	var replaced []bool
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
		if outcome == index.Held && e.Shared() {
			p.split(rms, rm, e, ix)
			if replaced == nil {
				replaced = make([]bool, n)
			}
			replaced[i] = true
			continue
		}
		p.enrichDevice(ix, attrs, id, e, outcome)
		if pigeonhole && outcome == index.Unknown && isMIGSeries(id) {
			unplaced.observe(ix, attrs)
		}
	}
	unplaced.settle(ix)
	if replaced != nil {
		i := 0
		rms.RemoveIf(func(pmetric.ResourceMetrics) bool {
			drop := i < n && replaced[i]
			i++
			return drop
		})
	}
	return md, nil
}

// enrichDevice handles a device resource that is not copied: held whole by
// one holder, unallocated, a MIG-enabled GPU, or unknown.
func (p *attributesProcessor) enrichDevice(ix *index.Index, attrs pcommon.Map, id index.Identity, e *index.Entry, outcome index.Outcome) {
	switch outcome {
	case index.Held:
		applyCopy(attrs, &e.Copies[0], baseShare(attrs), ix.NodeAttrs)
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

// split replaces a shared device's resource with one copy per holding.
// Device-wide metrics go to every copy; data points that carry process.pid
// go only to the copy of the pod (or ECS container) that owns the process.
func (p *attributesProcessor) split(rms pmetric.ResourceMetricsSlice, orig pmetric.ResourceMetrics, e *index.Entry, ix *index.Index) {
	base := baseShare(orig.Resource().Attributes())
	out := make([]pmetric.ResourceMetrics, len(e.Copies))
	remainder := -1
	for i := range e.Copies {
		c := &e.Copies[i]
		out[i] = newCopy(rms, orig)
		applyCopy(out[i].Resource().Attributes(), c, base, ix.NodeAttrs)
		if c.Consumer == nil {
			remainder = i
		}
	}
	r := router{p: p, e: e, rms: rms, orig: orig, remainder: remainder, node: ix.NodeAttrs}
	sms := orig.ScopeMetrics()
	for s := 0; s < sms.Len(); s++ {
		sm := sms.At(s)
		dst := make([]pmetric.ScopeMetrics, len(out))
		for i := range out {
			dst[i] = out[i].ScopeMetrics().AppendEmpty()
			dst[i].SetSchemaUrl(sm.SchemaUrl())
			sm.Scope().CopyTo(dst[i].Scope())
		}
		ms := sm.Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			if isPerProcess(m) {
				r.route(m, sm, dst)
				continue
			}
			last := len(dst) - 1
			for i := 0; i < last; i++ {
				m.CopyTo(dst[i].Metrics().AppendEmpty())
			}
			// The original is dropped after the split: the last copy takes it.
			m.MoveTo(dst[last].Metrics().AppendEmpty())
		}
	}
}

func newCopy(rms pmetric.ResourceMetricsSlice, orig pmetric.ResourceMetrics) pmetric.ResourceMetrics {
	c := rms.AppendEmpty()
	c.SetSchemaUrl(orig.SchemaUrl())
	orig.Resource().CopyTo(c.Resource())
	return c
}

// isPerProcess: a gauge or sum whose points carry process.pid.
func isPerProcess(m pmetric.Metric) bool {
	var dps pmetric.NumberDataPointSlice
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		dps = m.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		dps = m.Sum().DataPoints()
	default:
		return false
	}
	if dps.Len() == 0 {
		return false
	}
	_, ok := dps.At(0).Attributes().Get(accelschema.AttrProcessPID)
	return ok
}

// router sends per-process points to their owner's copy.
type router struct {
	p         *attributesProcessor
	e         *index.Entry
	rms       pmetric.ResourceMetricsSlice
	orig      pmetric.ResourceMetrics
	remainder int
	node      []index.KV

	unattributed   pmetric.ResourceMetrics
	unattributedSM map[int]pmetric.ScopeMetrics
	hasUnattr      bool
}

func (r *router) route(m pmetric.Metric, sm pmetric.ScopeMetrics, dst []pmetric.ScopeMetrics) {
	var dps pmetric.NumberDataPointSlice
	if m.Type() == pmetric.MetricTypeGauge {
		dps = m.Gauge().DataPoints()
	} else {
		dps = m.Sum().DataPoints()
	}
	targets := make(map[int]pmetric.NumberDataPointSlice, 2)
	target := func(i int, scope pmetric.ScopeMetrics) pmetric.NumberDataPointSlice {
		if t, ok := targets[i]; ok {
			return t
		}
		nm := scope.Metrics().AppendEmpty()
		nm.SetName(m.Name())
		nm.SetDescription(m.Description())
		nm.SetUnit(m.Unit())
		m.Metadata().CopyTo(nm.Metadata())
		var t pmetric.NumberDataPointSlice
		if m.Type() == pmetric.MetricTypeGauge {
			t = nm.SetEmptyGauge().DataPoints()
		} else {
			s := nm.SetEmptySum()
			s.SetIsMonotonic(m.Sum().IsMonotonic())
			s.SetAggregationTemporality(m.Sum().AggregationTemporality())
			t = s.DataPoints()
		}
		targets[i] = t
		return t
	}
	for k := 0; k < dps.Len(); k++ {
		dp := dps.At(k)
		i := r.owner(dp)
		var to pmetric.NumberDataPointSlice
		switch {
		case i >= 0:
			to = target(i, dst[i])
		case r.remainder >= 0:
			to = target(r.remainder, dst[r.remainder])
		default:
			to = target(-1, r.unattributedScope(sm))
		}
		dp.CopyTo(to.AppendEmpty())
	}
}

// owner finds the copy whose holder runs the point's process, -1 if none.
func (r *router) owner(dp pmetric.NumberDataPoint) int {
	v, ok := dp.Attributes().Get(accelschema.AttrProcessPID)
	if !ok {
		return -1
	}
	pid := v.Int()
	if v.Type() == pcommon.ValueTypeStr {
		pid = int64(intAttr(dp.Attributes(), accelschema.AttrProcessPID))
	}
	o, err := r.p.pids.Lookup(pid)
	if err != nil {
		if errors.Is(err, cgroup.ErrNoProcess) {
			r.p.rl.Warn("pid-missing", "accelerator_attributes: cannot read a GPU process's cgroup; per-process data stays with the device's unattributed share. "+
				"Run the collector with hostPID: true, or mount the host's /proc and set proc_root", zap.Error(err))
		} else {
			r.p.rl.Warn("pid-cgroup", "accelerator_attributes: malformed cgroup file", zap.Error(err))
		}
		return -1
	}
	fallback := -1
	for i, c := range r.e.Copies {
		if c.Consumer == nil {
			continue
		}
		if o.ContainerID != "" {
			for _, cid := range c.Consumer.ContainerIDs {
				if cid == o.ContainerID {
					return i
				}
			}
		}
		if fallback < 0 && o.PodUID != "" && c.Consumer.PodUID == o.PodUID {
			fallback = i
		}
	}
	return fallback
}

// unattributedScope is where per-process points of processes that hold
// none of the device's shares go (an MPS server, a monitoring agent with
// all GPUs visible) when every share is held: a copy with the device's
// identity, no holder, state allocated and share 0, so nothing is lost and
// nothing is paid twice.
func (r *router) unattributedScope(sm pmetric.ScopeMetrics) pmetric.ScopeMetrics {
	if !r.hasUnattr {
		r.unattributed = newCopy(r.rms, r.orig)
		attrs := r.unattributed.Resource().Attributes()
		clearHolder(attrs)
		attrs.PutStr(accelschema.AttrAllocationState, accelschema.AllocationAllocated)
		attrs.PutDouble(accelschema.AttrPartitionShare, 0)
		insertAll(attrs, r.node)
		r.unattributedSM = map[int]pmetric.ScopeMetrics{}
		r.hasUnattr = true
	}
	key := scopeKey(r.orig, sm)
	if s, ok := r.unattributedSM[key]; ok {
		return s
	}
	s := r.unattributed.ScopeMetrics().AppendEmpty()
	s.SetSchemaUrl(sm.SchemaUrl())
	sm.Scope().CopyTo(s.Scope())
	r.unattributedSM[key] = s
	return s
}

func scopeKey(rm pmetric.ResourceMetrics, sm pmetric.ScopeMetrics) int {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		if sms.At(i) == sm {
			return i
		}
	}
	return -1
}
