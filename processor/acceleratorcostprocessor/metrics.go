package acceleratorcostprocessor

import (
	"context"
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/mig"
	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/baseline"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/window"
)

// observation is one device or partition resource of the batch.
type observation struct {
	rm    pmetric.ResourceMetrics
	id    identity
	sg    signals
	row   pricing.Row
	match pricing.Match
	// device: for a consumer copy of a shared device, the signals of the
	// device's own resource in the batch (joinDevices); nil otherwise.
	device *signals
}

// processMetrics adds price, cost, waste and findings counts to every device
// or partition resource of the batch. It never fails the batch: a resource
// it cannot price passes through unchanged.
func (p *costProcessor) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	w := p.prices.Load()
	if w == nil {
		return md, nil
	}
	table := w.Table()
	now := p.now()
	var out []finding

	p.mu.Lock()
	p.batch++
	obs := p.scratch[:0]
	rms := md.ResourceMetrics()
	n := rms.Len()
	// Pass 1: what every resource is, the partition layout of every device
	// and the serving pods' signals, so that pass 2 sees the whole batch.
	for i := 0; i < n; i++ {
		rm := rms.At(i)
		sg := readSignals(rm)
		if sg.costed {
			continue
		}
		id := p.readIdentity(rm.Resource().Attributes())
		if id.hwID == "" {
			if sg.t == 0 {
				sg.t = pcommon.NewTimestampFromTime(now)
			}
			if sg.hasKV || sg.hasWaiting || sg.hasRunning {
				p.recordPod(id, sg, now)
			}
			continue
		}
		row, match := table.Lookup(id.hostType, id.region, id.model)
		obs = append(obs, observation{rm: rm, id: id, sg: sg, row: row, match: match})
	}
	p.joinDevices(obs)
	for i := range obs {
		if obs[i].sg.t == 0 {
			obs[i].sg.t = pcommon.NewTimestampFromTime(now)
		}
		p.recordDevice(&obs[i], now)
	}
	// Pass 2: accrue and emit.
	for i := range obs {
		out = p.account(&obs[i], table, now, out)
	}
	p.emitRemainders(md, now)
	p.expire(now)
	clear(obs)
	p.scratch = obs[:0]
	p.touched = p.touched[:0]
	p.mu.Unlock()

	p.deliver(ctx, out, now)
	return md, nil
}

// recordPod files a serving pod's KV cache and queue under its UID and its
// namespace/name, for the devices the pod holds.
func (p *costProcessor) recordPod(id identity, sg signals, now time.Time) {
	uid, name := id.podKeys()
	for _, k := range [2]string{uid, name} {
		if k == "" {
			continue
		}
		ps := p.pods[k]
		if ps == nil {
			ps = &podSignals{}
			p.pods[k] = ps
		}
		if sg.t > ps.t+sameScrape {
			*ps = podSignals{t: sg.t}
		}
		// Several servers in one pod (rare): the busiest cache and queue.
		if sg.hasKV {
			ps.kv, ps.hasKV = math.Max(ps.kv, sg.kv), true
		}
		if sg.hasWaiting {
			ps.waiting, ps.hasQueue = math.Max(ps.waiting, sg.waiting), true
		}
		if sg.hasRunning {
			ps.running = math.Max(ps.running, sg.running)
		}
		ps.t = max(ps.t, sg.t)
		ps.seen = now
	}
}

// recordDevice notes the device's place in its parent's layout and what its
// hw.status says.
func (p *costProcessor) recordDevice(o *observation, now time.Time) {
	id := &o.id
	if id.deviceLevel() {
		ps := p.parentOf(id.hwID, now)
		ps.ownSeen = now
	}
	if parent := id.partitionOf(); parent != "" {
		ps := p.parentOf(parent, now)
		c := ps.children[id.key]
		if c == nil {
			c = &childInfo{}
			ps.children[id.key] = c
		}
		c.share = p.ownShare(id, o.row, o.match)
		if c.profile != id.profile {
			c.profile, c.parsed = id.profile, mig.Profile{}
			if prof, err := mig.ParseProfile(id.profile); err == nil {
				c.parsed = prof
			}
		}
		c.mig = isMIG(id.partType)
		c.lastT, c.seen = max(c.lastT, o.sg.t), now
		if o.sg.t > ps.lastChildT+sameScrape {
			if ps.lastChildT != 0 {
				ps.interval = o.sg.t - ps.lastChildT
			}
			ps.lastChildT = o.sg.t
		}
		if c.mig && ps.template.Len() == 0 {
			copyDeviceAttributes(o.rm.Resource().Attributes(), ps.template, p.cfg)
		}
		if c.mig {
			ps.memoryGB = gpuMemoryGB(o.row, o.match, id.model)
		}
	}
	if o.sg.hasStatus {
		h := p.healthOf(id.hwID, now)
		if o.sg.statusFailed && !h.statusFailed {
			h.statusSince = o.sg.t
		}
		h.statusFailed, h.statusT = o.sg.statusFailed, o.sg.t
	} else if h := p.health[id.hwID]; h != nil {
		h.seen = now // a device that still reports keeps its health history
	}
}

func (p *costProcessor) parentOf(hwID string, now time.Time) *parentState {
	ps := p.parents[hwID]
	if ps == nil {
		ps = &parentState{children: map[uint64]*childInfo{}, template: pcommon.NewMap()}
		p.parents[hwID] = ps
	}
	ps.seen = now
	if ps.batchSeq != p.batch {
		ps.batchSeq = p.batch
		p.touched = append(p.touched, ps)
		ps.id = hwID
	}
	return ps
}

func (p *costProcessor) healthOf(hwID string, now time.Time) *healthState {
	h := p.health[hwID]
	if h == nil {
		h = &healthState{}
		p.health[hwID] = h
	}
	h.seen = now
	return h
}

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

// elapsed is the time a pair of data points accrues: their distance, capped
// at max_interval; 0 for the first point and for points out of order.
func (p *costProcessor) elapsed(last, t pcommon.Timestamp) time.Duration {
	if last == 0 || t <= last {
		return 0
	}
	return min(time.Duration(t-last), p.cfg.MaxInterval)
}

// unavailable says whether the resource's device (or the physical device it
// is a partition of) is failed at t, and which health state says so: one
// that knows the recommended action wins. A NeuronCore's own hw.status says
// failed, but the health event with the action is about its device.
func (p *costProcessor) unavailable(id *identity, t pcommon.Timestamp) (bool, *healthState) {
	var own, parent *healthState
	if h := p.health[id.hwID]; h != nil && h.failedAt(t) {
		own = h
	}
	if id.parent != "" && id.parent != id.hwID {
		if h := p.health[id.parent]; h != nil && h.failedAt(t) {
			parent = h
		}
	}
	switch {
	case own != nil && (own.action != "" || parent == nil):
		return true, own
	case parent != nil:
		return true, parent
	}
	return false, nil
}

func (p *costProcessor) podFor(id *identity, t pcommon.Timestamp) *podSignals {
	uid, name := id.podKeys()
	for _, k := range [2]string{uid, name} {
		if k == "" {
			continue
		}
		if ps := p.pods[k]; ps != nil && ps.t+pcommon.Timestamp(p.cfg.MaxInterval) >= t {
			return ps
		}
	}
	return nil
}

// accrual is one resource's interval, for the waste split and the findings.
type accrual struct {
	table                        *pricing.Table
	row                          pricing.Row
	devicePrice, share           float64
	price                        float64
	t                            pcommon.Timestamp
	dt                           time.Duration
	unavailable                  bool
	health                       *healthState
	remainder                    bool
	summary                      window.Summary
	windowOK                     bool
	baselineKey                  baseline.Key
	baseline                     float64
	baselineWarm, hasBaselineKey bool
}

func (p *costProcessor) account(o *observation, table *pricing.Table, now time.Time, out []finding) []finding {
	id := &o.id
	if o.match == pricing.NoMatch {
		p.warnUnpriced(id)
		return out
	}
	st := p.stateFor(o, now)
	a := accrual{table: table, row: o.row, devicePrice: o.row.AcceleratorHourly(), t: o.sg.t}

	// A device-level resource whose partitions are reported too (a Neuron
	// device and its cores, a GPU and its MIG instances, a shared GPU and
	// its consumers' copies) stands only for what the partitions do not
	// cover, whatever partition type or share an upstream processor gave
	// it: exactly one level carries the money, and the shares of the device
	// add up to 1.
	var lay layout
	if id.deviceLevel() {
		if ps := p.parents[id.hwID]; ps != nil && len(ps.children) > 0 {
			if lay = p.layoutAt(ps, a.t); lay.n > 0 {
				a.remainder = true
			}
		}
	}
	fragmentation := 0.0
	switch {
	case a.remainder:
		a.share = lay.remainder
		if lay.remainder > 0 {
			fragmentation = lay.fragRemainder / lay.remainder
		}
	default:
		a.share = p.ownShare(id, o.row, o.match)
		if parent := id.partitionOf(); parent != "" {
			if ps := p.parents[parent]; ps != nil {
				l := p.layoutAt(ps, a.t)
				a.share *= l.scale
				if isMIG(id.partType) && l.fragExcess > 0 && l.sumShares > 0 {
					fragmentation = l.fragExcess / l.sumShares
				}
			}
		}
	}
	setShare(o.rm.Resource().Attributes(), a.share)
	a.price = a.devicePrice * a.share
	a.dt = p.elapsed(st.lastT, a.t)
	cost := a.price * a.dt.Hours()
	a.unavailable, a.health = p.unavailable(id, a.t)
	allocated := id.allocated && !a.remainder

	sg := &o.sg
	if id.consumerCopy() {
		sg.joinDevice(o.device, a.share)
	}
	hasActivity := sg.activitySrc != noActivity
	idle := hasActivity && sg.activity < p.cfg.Waste.IdleActivity

	training := id.workloadType == s.WorkloadTraining
	trainSignal, trainMetric, hasTrain := sg.tensor, s.MetricTensorActive, sg.hasTensor
	if !hasTrain {
		trainSignal, trainMetric, hasTrain = sg.sm, s.MetricSMActive, sg.hasSM
	}
	if training && hasTrain && id.workloadKey() != "" {
		a.baselineKey = baseline.Key{Workload: id.workloadKey(), Model: id.model, Signal: trainMetric}
		a.hasBaselineKey = true
		a.baseline, _, a.baselineWarm = p.baselines.Get(a.baselineKey)
	}

	pod := p.podFor(id, a.t)
	sample := window.Sample{Activity: sg.activity, HasActivity: hasActivity}
	if hasTrain && !idle {
		sample.Training, sample.HasTraining = trainSignal, true
	}
	if sg.hasMemUsed && sg.hasMemLimit {
		sample.MemRatio, sample.MemBytes, sample.HasMemory = math.Min(sg.memUsed/sg.memLimit, 1), sg.memUsed, true
	}
	if pod != nil {
		sample.KVCache, sample.HasKV = pod.kv, pod.hasKV
		sample.Waiting, sample.HasQueue = pod.waiting, pod.hasQueue
	}
	if a.dt > 0 || st.lastT == 0 {
		st.win.Add(int64(a.t), a.dt, sample)
	}
	a.summary = st.win.Summarize(int64(a.t))
	a.windowOK = a.summary.Covered >= time.Duration(p.cfg.Findings.MinCoverage*float64(p.cfg.Findings.Window))

	in := interval{
		cost: cost, unavailable: a.unavailable, allocated: allocated, reserved: id.reserved, fragmentation: fragmentation,
		activity: sg.activity, hasActivity: hasActivity,
		training: training, trainingSignal: trainSignal, hasTraining: hasTrain,
		baseline: a.baseline, baselineWarm: a.baselineWarm,
		inference: id.workloadType == s.WorkloadInference,
		windowOK:  a.windowOK, peakMem: a.summary.PeakMemRatio, hasPeakMem: a.summary.HasMemory,
		peakAct: a.summary.PeakActivity, hasPeakAct: a.summary.HasActivity,
	}
	if pod != nil && pod.hasKV && pod.hasQueue {
		in.hasInference, in.kvCache, in.waiting = true, pod.kv, pod.waiting
	}
	waste := splitWaste(in, &p.cfg.Waste)

	// The baseline learns from the intervals the workload was really
	// training in; the comparison above used the baseline before this one.
	if a.hasBaselineKey && allocated && !a.unavailable && !idle && a.dt > 0 {
		p.baselines.Update(a.baselineKey, trainSignal, a.dt, now)
	}

	st.cost += cost
	for i := range waste {
		st.waste[i] += waste[i]
	}
	st.devicePrice, st.share = a.devicePrice, a.share
	st.lastT = max(st.lastT, a.t)

	out = p.evaluate(st, &a, allocated, out)
	p.emit(o.rm, st, a.price, a.t)
	return out
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

// stateFor finds or creates the state of a resource.
func (p *costProcessor) stateFor(o *observation, now time.Time) *resourceState {
	st := p.resources[o.id.key]
	if st != nil && now.Sub(st.seen) > p.cfg.StateTTL {
		st = nil // gone longer than state_ttl: a new series, whether or not the sweep has run
	}
	if st == nil {
		st = &resourceState{attrs: pcommon.NewMap(), id: o.id, firstT: o.sg.t, win: window.New(p.cfg.Findings.Window)}
		o.rm.Resource().Attributes().CopyTo(st.attrs)
		p.resources[o.id.key] = st
	}
	st.seen = now
	if wk := o.id.workloadKey(); wk != "" {
		m := p.workloads[wk]
		if m == nil {
			m = map[string]time.Time{}
			p.workloads[wk] = m
		}
		m[o.id.replicaKey()] = now
	}
	return st
}

func (p *costProcessor) warnUnpriced(id *identity) {
	key := id.hostType + "\x00" + id.region + "\x00" + id.model
	if !p.warn.allow("unpriced\x00" + key) {
		return
	}
	if id.hostType == "" {
		p.logger.Warn("no price for a device without an instance type: no cost metrics for it. "+
			"Set host.type (node label node.kubernetes.io/instance-type) or add a row with instance_type \"*\" "+
			"and its accelerator_model to a file in pricing.files",
			zap.String("hw.id", id.hwID), zap.String("hw.model", id.model), zap.String("k8s.node.name", id.nodeName))
		return
	}
	p.logger.Warn("no price row for this instance type: no cost metrics for its devices. "+
		"Add a row (instance_type, region, price_per_hour, accelerator_count) to a file in pricing.files",
		zap.String("host.type", id.hostType), zap.String("cloud.region", id.region),
		zap.String("hw.id", id.hwID), zap.String("hw.model", id.model))
}

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

// sweepEvery bounds how often state is scanned for expiry.
const sweepEvery = time.Minute

// expire forgets devices, partitions, pods, workloads and health states not
// seen within state_ttl, and baselines past their own TTL: memory follows
// the live fleet, not time.
func (p *costProcessor) expire(now time.Time) {
	if now.Sub(p.lastSweep) < min(sweepEvery, p.cfg.StateTTL/4) {
		return
	}
	p.lastSweep = now
	ttl := p.cfg.StateTTL
	for k, st := range p.resources {
		if now.Sub(st.seen) > ttl {
			delete(p.resources, k)
		}
	}
	for k, ps := range p.parents {
		for ck, c := range ps.children {
			if now.Sub(c.seen) > ttl {
				delete(ps.children, ck)
			}
		}
		if now.Sub(ps.seen) > ttl {
			delete(p.parents, k)
		}
	}
	for k, ps := range p.pods {
		if now.Sub(ps.seen) > ttl {
			delete(p.pods, k)
		}
	}
	for k, h := range p.health {
		if now.Sub(h.seen) > ttl {
			delete(p.health, k)
		}
	}
	for k, m := range p.workloads {
		for rk, seen := range m {
			if now.Sub(seen) > ttl {
				delete(m, rk)
			}
		}
		if len(m) == 0 {
			delete(p.workloads, k)
		}
	}
	p.baselines.Expire(now)
}
