// Package memstore is the in-memory backend: a bounded model of the
// metrics that flow through this gateway. Each device, partition or consumer
// copy keeps its identity, its latest readings, one ring buffer per chart
// (points_per_series, one point per retention/points_per_series step) and
// the recent samples of its cost counters; each inference server its
// gauges, counters and histograms; each node its MPS daemon. Whatever is not
// seen for the expiry leaves the model, so memory follows the fleet, not
// time.
package memstore

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Config bounds the store.
type Config struct {
	Retention       time.Duration
	PointsPerSeries int
	Expiry          time.Duration
	RateWindow      time.Duration
}

// chart slots, in fleet.Charts order.
const (
	chartUtilization = iota
	chartMemoryUsed
	chartMemoryUtilization
	chartPower
	chartTemperature
	chartSMActive
	chartSMOccupancy
	chartTensorActive
	chartDRAMActive
	chartGREngine
	numCharts
)

type resourceKey struct {
	node, hwID, partitionType, partitionID, holder string
}

// resource is one device, partition or consumer copy.
type resource struct {
	id       fleet.Identity
	lastSeen int64 // unix ms
	charts   [numCharts]*chartRing
	// last is each chart's newest value at full precision (the rings keep
	// float32), read by every snapshot.
	last   [numCharts]float64
	health string
	// errors names the failure the device's hw.errors counts show, for
	// the console to say why before the health event arrives.
	errors   xid.ErrorWatch
	memLimit float64
	hasLimit bool
	price    float64
	hasPrice bool
	waste    map[string]*counterRing
}

type serverKey struct {
	endpoint, model, podUID, pod string
}

// server is one inference endpoint and model.
type server struct {
	sv       fleet.Server
	lastSeen int64
	gauges   [numServerGauges]*float64
	counters [numServerCounters]*counterRing
	hists    [numServerHists]*histRing
}

const (
	gaugeRunning = iota
	gaugeWaiting
	gaugeKV
	gaugePrefix
	numServerGauges
)

const (
	counterRequests = iota
	counterInputTokens
	counterOutputTokens
	counterPreemptions
	numServerCounters
)

const (
	histTTFT = iota
	histITL
	histTPOT
	histE2E
	numServerHists
)

type mpsState struct {
	m        fleet.MPS
	lastSeen int64
}

// Store is the in-memory model. Safe for concurrent use.
type Store struct {
	cfg        Config
	stepSec    uint32
	rateStepMS int64

	mu        sync.RWMutex
	resources map[resourceKey]*resource
	servers   map[serverKey]*server
	mps       map[string]*mpsState
	lastSweep int64
	now       func() time.Time
	// version counts batches, so that the console rebuilds its view only
	// when the model changed.
	version atomic.Uint64
	// ingested counts the batch Consume is reading (under mu).
	ingested Ingested
}

// SeriesHeld is how many series the model holds: each resource's charts
// and waste counters, each server's gauges, counters and histograms, each
// MPS daemon.
func (st *Store) SeriesHeld() int {
	st.mu.RLock()
	defer st.mu.RUnlock()
	n := len(st.mps)
	for _, r := range st.resources {
		for _, c := range r.charts {
			if c != nil {
				n++
			}
		}
		n += len(r.waste)
	}
	for _, srv := range st.servers {
		for _, g := range srv.gauges {
			if g != nil {
				n++
			}
		}
		for _, c := range srv.counters {
			if c != nil {
				n++
			}
		}
		for _, h := range srv.hists {
			if h != nil {
				n++
			}
		}
	}
	return n
}

// Version changes whenever what Snapshot returns may have.
func (st *Store) Version() uint64 { return st.version.Load() }

// New returns an empty store.
func New(cfg Config) *Store {
	step := uint32(cfg.Retention / time.Duration(cfg.PointsPerSeries) / time.Second)
	return &Store{cfg: cfg, stepSec: max(step, 1), rateStepMS: max(cfg.RateWindow.Milliseconds()/(counterSamples-1), 1),
		resources: map[resourceKey]*resource{}, servers: map[serverKey]*server{}, mps: map[string]*mpsState{}, now: time.Now}
}

// SetClock replaces the clock (tests).
func (st *Store) SetClock(now func() time.Time) { st.now = now }

// Len is how many devices, partitions and copies are held.
func (st *Store) Len() int {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return len(st.resources)
}

// sweep drops what the expiry has passed; at most once per tenth of it.
func (st *Store) sweep(nowMS int64) {
	exp := st.cfg.Expiry.Milliseconds()
	if nowMS-st.lastSweep < exp/10 {
		return
	}
	st.lastSweep = nowMS
	for k, r := range st.resources {
		if nowMS-r.lastSeen > exp {
			delete(st.resources, k)
		}
	}
	for k, s := range st.servers {
		if nowMS-s.lastSeen > exp {
			delete(st.servers, k)
		}
	}
	for k, m := range st.mps {
		if nowMS-m.lastSeen > exp {
			delete(st.mps, k)
		}
	}
}
