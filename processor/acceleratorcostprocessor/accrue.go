package acceleratorcostprocessor

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/baseline"
	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/window"
)

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

// accrue prices one resource's interval since its last data point, splits
// the cost into waste, updates its baseline and window, emits its cost
// metrics and appends the findings it raises to out. A resource without a
// price row is only warned about.
func (p *costProcessor) accrue(o *observation, table *pricing.Table, now time.Time, out []finding) []finding {
	id := &o.id
	if o.match == pricing.NoMatch {
		p.warnUnpriced(id)
		return out
	}
	st := p.stateFor(o, now)
	a := accrual{table: table, row: o.row, devicePrice: o.row.AcceleratorHourly(), t: o.sg.t}

	var fragmentation float64
	a.share, fragmentation, a.remainder = p.pricedShare(id, o.row, o.match, a.t)
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
