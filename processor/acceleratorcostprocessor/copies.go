package acceleratorcostprocessor

import (
	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// A shared device (time slicing, MPS, a shared DRA claim) arrives from the
// attributes processor as the device's own resource, which keeps every
// device-wide reading and stands for what the consumers leave, plus one
// copy per consumer with its share and only what was measured for it
// (per-pod utilization and memory, its processes). A copy's waste is judged
// on the consumer's own measurement when there is one, else on the
// device's readings, joined from the device's resource by hw.id.

// consumerCopy reports whether the resource is a consumer's copy of a
// device: a copy of a whole device names it as its parent (whatever
// partition type a mapping file left it), a copy of a MIG instance is a
// time-sliced, MPS or DRA share of it.
func (id *identity) consumerCopy() bool {
	if id.parent == "" {
		return false
	}
	return id.parent == id.hwID || s.IsSharedCopy(id.partType) || id.partType == s.PartitionDRA
}

// joinDevices points every consumer copy of the batch at the signals of its
// device's own resource, and gives a copy without points of its own its
// device's time, so that it is priced in the same scrape.
func (p *costProcessor) joinDevices(obs []observation) {
	if p.deviceSignals == nil {
		p.deviceSignals = map[string]*signals{}
	}
	own := p.deviceSignals
	clear(own)
	copies := 0
	for i := range obs {
		if obs[i].id.consumerCopy() {
			copies++
		} else {
			own[obs[i].id.hwID] = &obs[i].sg
		}
	}
	if copies == 0 {
		return
	}
	for i := range obs {
		o := &obs[i]
		if !o.id.consumerCopy() {
			continue
		}
		if dev := own[o.id.hwID]; dev != nil {
			o.device = dev
			if o.sg.t == 0 {
				o.sg.t = dev.t
			}
		}
	}
}

// joinDevice completes a copy's signals with its device's. The consumer's
// own measurement wins: per-pod utilization, else its processes'
// utilization; per-pod memory, else its processes' memory, against the
// device's memory × the copy's share. Without one, the device's readings
// stand for every consumer alike: a busy GPU is nobody's idle waste, an idle
// one everybody's.
func (sg *signals) joinDevice(dev *signals, share float64) {
	if sg.activitySrc == noActivity {
		switch {
		case sg.hasProcUtil:
			sg.activity, sg.activitySrc = ratio(sg.procUtil), fromProcesses
		case dev != nil:
			sg.activity, sg.activitySrc = dev.activity, dev.activitySrc
		}
	}
	if !sg.hasMemUsed && sg.hasProcMem {
		sg.memUsed, sg.hasMemUsed = sg.procMem, true
	}
	if dev == nil {
		return
	}
	if !sg.hasTensor {
		sg.tensor, sg.hasTensor = dev.tensor, dev.hasTensor
	}
	if !sg.hasSM {
		sg.sm, sg.hasSM = dev.sm, dev.hasSM
	}
	switch {
	case !dev.hasMemLimit:
	case sg.hasMemUsed:
		sg.memLimit, sg.hasMemLimit = dev.memLimit*share, true
	default:
		sg.memUsed, sg.hasMemUsed = dev.memUsed, dev.hasMemUsed
		sg.memLimit, sg.hasMemLimit = dev.memLimit, true
	}
}
