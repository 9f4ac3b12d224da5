package acceleratorcostprocessor

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-accel/otelcol-accel/internal/mig"
)

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
		h.errors.Observe(o.sg.t.AsTime(), o.sg.xids, false, !h.statusFailed)
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
