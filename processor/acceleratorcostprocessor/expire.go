package acceleratorcostprocessor

import "time"

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
