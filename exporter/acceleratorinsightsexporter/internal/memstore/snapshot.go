package memstore

import (
	"runtime"
	"strconv"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
)

// Snapshot is the model now: each resource's latest readings and its
// rates over the rate window.
func (st *Store) Snapshot() *fleet.Snapshot {
	now := st.now()
	fromMS := now.Add(-st.cfg.RateWindow).UnixMilli()
	st.mu.RLock()
	defer st.mu.RUnlock()
	snap := &fleet.Snapshot{At: now.UTC(), Resources: make([]fleet.Resource, 0, len(st.resources))}
	// One slab for every resource's readings: a snapshot of 10,000
	// devices is then a few allocations, not tens of thousands, and a
	// rebuild in the background leaves the collector's garbage collector
	// (and the requests it would slow) little to do.
	vals := &slab{vals: make([]float64, 0, valuesPerResource*len(st.resources))}
	for _, r := range st.resources {
		snap.Resources = append(snap.Resources, r.snapshot(fromMS, vals))
		if len(snap.Resources)%yieldEvery == 0 {
			// Let a request that waits for a processor in first: on
			// a two-core gateway the snapshot would hold one for
			// its whole length.
			runtime.Gosched()
		}
	}
	for _, srv := range st.servers {
		snap.Servers = append(snap.Servers, srv.snapshot(fromMS))
	}
	for _, m := range st.mps {
		snap.MPS = append(snap.MPS, m.m)
	}
	return snap
}

// yieldEvery is how many resources a snapshot copies between yields.
const yieldEvery = 1024

// valuesPerResource is how many readings a snapshot's resource points to
// at most: utilization, memory used, memory utilization, limit and price.
const valuesPerResource = 5

// slab hands out pointers to float64s of one allocation.
type slab struct{ vals []float64 }

func (s *slab) ptr(v float64) *float64 {
	if len(s.vals) == cap(s.vals) { // never with the capacity Snapshot gives it
		p := new(float64)
		*p = v
		return p
	}
	s.vals = append(s.vals, v)
	return &s.vals[len(s.vals)-1]
}

// latest is a chart's newest value, nil when it has none.
func (r *resource) latest(slot int, s *slab) *float64 {
	if r.charts[slot] == nil || r.charts[slot].n == 0 {
		return nil
	}
	return s.ptr(r.last[slot])
}

// widen turns a stored float32 into the float64 with the same shortest
// decimal form (0.8, not 0.800000011920929), as the agents sent it.
func widen(v float32) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
	return f
}

func (r *resource) snapshot(fromMS int64, s *slab) fleet.Resource {
	out := fleet.Resource{Identity: r.id, Health: r.health}
	if c, ok := r.errors.Cause(); ok {
		out.Cause = &c
	}
	out.Utilization = r.latest(chartUtilization, s)
	if out.Utilization == nil {
		out.Utilization = r.latest(chartGREngine, s)
	}
	out.MemoryUsed = r.latest(chartMemoryUsed, s)
	out.MemoryUtilization = r.latest(chartMemoryUtilization, s)
	if r.hasLimit {
		// a copy: the store's value changes under later batches
		out.MemoryLimit = s.ptr(r.memLimit)
	}
	if r.hasPrice {
		out.PricePerHour = s.ptr(r.price)
	}
	if len(r.waste) > 0 {
		out.WastePerHour = make(map[string]float64, len(r.waste))
		for reason, c := range r.waste {
			if rate, ok := c.rate(fromMS); ok {
				out.WastePerHour[reason] = rate * 3600
			}
		}
	}
	return out
}

func rateOf(c *counterRing, fromMS int64) *float64 {
	if c == nil {
		return nil
	}
	v, ok := c.rate(fromMS)
	if !ok {
		return nil
	}
	return &v
}

func (srv *server) snapshot(fromMS int64) fleet.Server {
	out := srv.sv
	out.RequestsRunning, out.RequestsWaiting = srv.gauges[gaugeRunning], srv.gauges[gaugeWaiting]
	out.KVCache, out.PrefixHitRatio = srv.gauges[gaugeKV], srv.gauges[gaugePrefix]
	out.RequestRate = rateOf(srv.counters[counterRequests], fromMS)
	out.InputTokensPerSec = rateOf(srv.counters[counterInputTokens], fromMS)
	out.OutputTokensPerS = rateOf(srv.counters[counterOutputTokens], fromMS)
	out.PreemptionsPerSec = rateOf(srv.counters[counterPreemptions], fromMS)
	out.TTFT = srv.hists[histTTFT].quantiles(fromMS)
	out.ITL = srv.hists[histITL].quantiles(fromMS)
	if out.ITL.P50 == nil {
		out.ITL = srv.hists[histTPOT].quantiles(fromMS)
	}
	out.E2E = srv.hists[histE2E].quantiles(fromMS)
	return out
}

// Series returns the charts of the named resources over the window.
func (st *Store) Series(refs []fleet.SeriesRef, window time.Duration) []fleet.Series {
	from := uint32(st.now().Add(-window).Unix())
	st.mu.RLock()
	defer st.mu.RUnlock()
	out := []fleet.Series{}
	for _, ref := range refs {
		r := st.resources[resourceKey{ref.Node, ref.HWID, ref.PartitionType, ref.PartitionID, ref.Holder}]
		if r == nil {
			continue
		}
		for slot, c := range r.charts {
			if c == nil || (ref.PartitionsUtilizationOnly && slot != chartUtilization && slot != chartGREngine) {
				continue
			}
			chart := fleet.Charts[slot]
			s := fleet.Series{Name: chart.Name, Metric: chart.Metric, Unit: chart.Unit, Resource: ref.HWID, Points: []fleet.Point{}}
			c.each(func(sec uint32, v float32) {
				if sec >= from {
					s.Points = append(s.Points, fleet.Point{float64(sec), widen(v)})
				}
			})
			out = append(out, s)
		}
	}
	return out
}
