package sim

import (
	"math"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/catalog"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/detrand"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// GPUSample holds the DCGM field values of one entity (a whole GPU or a
// MIG GPU instance) at one instant, in DCGM's units.
type GPUSample struct {
	// Lost is true once the GPU has fallen off the bus: DCGM then returns
	// blank values for everything but the last XID.
	Lost         bool
	XID          int64
	SMClock      int64 // MHz
	MemClock     int64 // MHz
	GPUTemp      int64 // °C
	MemTemp      int64 // °C
	PowerW       float64
	EnergyMJ     int64 // since boot
	PCIeReplay   int64
	GPUUtil      int64 // %
	MemCopyUtil  int64 // %
	EncUtil      int64 // %
	DecUtil      int64 // %
	FBFree       int64 // MiB
	FBUsed       int64 // MiB
	FBReserved   int64 // MiB
	NVLinkTotal  int64 // MB moved over all links since boot; -1 without NVLink
	CorrRows     int64
	UncorrRows   int64
	RemapFailure int64
	RemapPending int64
	GREngine     float64
	SMActive     float64
	Tensor       float64
	DRAM         float64
	PCIeTxBytes  int64 // bytes/s
	PCIeRxBytes  int64 // bytes/s
	// ThrottleReasons is the clock-event reason bitmask
	// (DCGM_FI_DEV_CLOCK_THROTTLE_REASONS).
	ThrottleReasons int64
}

// Clock-event reason bits (NVML's nvmlClocksEventReason*).
const (
	clockEventSWThermal    = 0x20
	clockEventHWThermal    = 0x40
	clockEventHWPowerBrake = 0x80
)

// Entity is one row of dcgm-exporter output: a GPU, or one of its MIG
// instances when the GPU is in MIG mode.
type Entity struct {
	GPU    *fleet.GPU
	MIG    *fleet.MIGInstance
	Sample GPUSample
	// PerPod is each consumer's own use of a whole GPU several pods share
	// (time-slicing), as NVML's per-process data measures it.
	PerPod []PodUsage
}

// PodUsage is one pod's own use of a shared GPU.
type PodUsage struct {
	Pod     *fleet.Pod
	GPUUtil int64 // %
	FBUsed  int64 // MiB
}

type gpuModel struct {
	g     *fleet.GPU
	model *catalog.GPUModel
	key   uint64
	whole *unit   // non-MIG GPUs
	gis   []*unit // MIG instances, by slot
	// Counters since boot, advanced tick by tick.
	counters   gpuCounters
	bootEnergy float64
	corrRows   int64
	multiGPU   bool
}

// gpuCounters are sums over the complete ticks before tick.
type gpuCounters struct {
	tick    int64
	joules  float64
	mb      float64
	replays int64
}

func (w *World) newGPUModel(g *fleet.GPU) *gpuModel {
	m := g.Node.Model
	key := detrand.Hash(w.seed, "gpu", g.UUID)
	gm := &gpuModel{g: g, model: m, key: key}
	uptimeDays := 3 + detrand.Unit(detrand.Hash(key, "uptime"))*40
	gm.bootEnergy = m.IdlePowerW * 1.4 * uptimeDays * 86400
	// A few GPUs of any fleet carry correctable remaps from the factory.
	if detrand.Unit(detrand.Hash(key, "corr")) < 0.15 {
		gm.corrRows = 1 + int64(detrand.Hash(key, "corrn")%3)
	}
	if g.MIGEnabled() {
		for _, mi := range g.MIG {
			u := w.newUnit(detrand.Hash(key, "gi", mi.GIID), float64(mi.Profile.MemoryMiB), mi.Holders, 0,
				m.GenTokensPerSec*mi.Share)
			gm.gis = append(gm.gis, u)
		}
	} else {
		gm.whole = w.newUnit(key, float64(m.MemoryMiB-m.ReservedMiB), g.Holders, g.Node.Replicas, m.GenTokensPerSec)
	}
	for _, u := range gm.units() {
		gm.multiGPU = gm.multiGPU || u.multiGPU
		for _, c := range u.consumers {
			c.pm.units = append(c.pm.units, u)
			if n := len(c.pm.gpus); n == 0 || c.pm.gpus[n-1] != gm {
				c.pm.gpus = append(c.pm.gpus, gm)
			}
		}
	}
	// A fatal failure stops every job on the GPU.
	for _, u := range gm.units() {
		for _, c := range u.consumers {
			markStall(c.pm, g.Failures, fatal)
		}
	}
	return gm
}

func (gm *gpuModel) units() []*unit {
	if gm.whole != nil {
		return []*unit{gm.whole}
	}
	return gm.gis
}

// health is a GPU's fault state at simulated time t.
type health struct {
	lastXID    int64
	lost       bool
	pending    bool
	failed     bool
	uncorrRows int64
	throttle   string // thermal or power, from a throttle failure on
}

func (gm *gpuModel) health(t float64) health {
	var h health
	for _, f := range gm.g.Failures {
		if f.At.Seconds() > t {
			break
		}
		if f.Throttle != "" {
			h.throttle = f.Throttle
			continue
		}
		switch f.RowRemap {
		case scenario.RowRemapPending:
			// A row remap is recorded with XID 63 and applied at the next reset.
			h.lastXID, h.pending = 63, true
			h.uncorrRows++
		case scenario.RowRemapFailed:
			h.lastXID, h.failed = 64, true
			h.uncorrRows++
		default:
			h.lastXID = int64(f.XID)
			if xid.Lookup(f.XID).FailureMode == accelschema.FailureModeDeviceLost {
				h.lost = true
			}
			if f.XID == 48 {
				// A double-bit error on A100 and newer is contained by a row remap.
				h.uncorrRows++
				h.pending = true
			}
		}
	}
	return h
}

// deviceState is the whole-GPU view at one tick: engine ratios summed over
// MIG instances by their compute share.
type deviceState struct {
	act, sm, tensor, dram, load float64
	memMiB                      float64
	held                        bool
}

func (gm *gpuModel) state(k int64, h health) (deviceState, []usage) {
	var ds deviceState
	var per []usage
	if h.lost {
		return ds, nil
	}
	if gm.whole != nil {
		u := gm.whole.usage(k)
		per = []usage{u}
		ds = deviceState{act: u.act, sm: u.sm, tensor: u.tensor, dram: u.dram, load: u.load, memMiB: u.memMiB, held: u.held}
		return ds, per
	}
	for i, u := range gm.gis {
		us := u.usage(k)
		per = append(per, us)
		w := float64(gm.g.MIG[i].Profile.ComputeSlices) / 7
		ds.act += us.act * w
		ds.sm += us.sm * w
		ds.tensor += us.tensor * w
		ds.dram += us.dram * w
		ds.memMiB += us.memMiB
		ds.load = math.Max(ds.load, us.load)
		ds.held = ds.held || us.held
	}
	return ds, per
}

// power is the board power at one tick.
func (gm *gpuModel) power(k int64, ds deviceState, h health) float64 {
	if h.lost {
		return 0
	}
	m := gm.model
	busy := 0.0
	if ds.act > 0.01 {
		busy = 0.1 + 0.9*math.Pow(ds.act, 0.85)
	}
	p := m.IdlePowerW + (m.MaxPowerW-m.IdlePowerW)*busy + 0.01*m.MaxPowerW*detrand.White(gm.key^7, k)
	return clamp(p, m.IdlePowerW*0.9, m.MaxPowerW)
}

// nvlinkRate is the NVLink traffic in MB/s: heavy for jobs that span GPUs
// (collectives), light otherwise.
func (gm *gpuModel) nvlinkRate(ds deviceState) float64 {
	if !gm.model.NVLink {
		return 0
	}
	if gm.multiGPU {
		return 150 + ds.act*110000
	}
	return 150 + ds.act*1500
}

// advance brings the counters to the start of tick k. Counters keep
// counting while the device is lost (they are just not reported), so they
// stay a pure function of the time.
func (gm *gpuModel) advance(k int64) {
	c := &gm.counters
	if k < c.tick {
		*c = gpuCounters{}
	}
	for c.tick < k {
		j := c.tick
		h := gm.health(float64(j) * TickSeconds)
		ds, _ := gm.state(j, h)
		c.joules += gm.power(j, ds, h) * TickSeconds
		c.mb += gm.nvlinkRate(ds) * TickSeconds
		if detrand.Unit(detrand.Hash(gm.key, "replay", j)) < 0.0008 {
			c.replays++
		}
		c.tick++
	}
}

// sample computes the entities of one GPU at simulated time t. The caller
// holds the node lock (the counters advance).
func (gm *gpuModel) sample(t float64) []Entity {
	k := Tick(t)
	h := gm.health(t)
	ds, per := gm.state(k, h)
	m := gm.model
	dev := GPUSample{Lost: h.lost, XID: h.lastXID}
	gm.advance(k)
	part := t - float64(k)*TickSeconds
	p := gm.power(k, ds, h)
	joules := gm.counters.joules + p*part
	mb := gm.counters.mb + gm.nvlinkRate(ds)*part
	replays := gm.counters.replays
	if !h.lost {
		dev.PowerW = p
		dev.EnergyMJ = int64((gm.bootEnergy + joules) * 1000)
		frac := (p - m.IdlePowerW) / (m.MaxPowerW - m.IdlePowerW)
		temp := m.IdleTempC + (m.MaxTempC-m.IdleTempC)*clamp(frac, 0, 1) + 1.2*detrand.Smooth(gm.key^3, k, 12)
		dev.GPUTemp = int64(math.Round(temp))
		dev.MemTemp = int64(math.Round(temp + 4 + 2*clamp(frac, 0, 1)))
		dev.MemClock = int64(m.MemClockMHz)
		dev.SMClock = int64(m.IdleSMClockMHz)
		if ds.act > 0.01 {
			dev.SMClock = int64(m.MaxSMClockMHz)
			if frac > 0.92 {
				dev.SMClock -= 15 * (1 + int64(detrand.Hash(gm.key, "clk", k)%6)) // power capping
			}
		}
		switch h.throttle {
		case scenario.ThrottleThermal:
			dev.ThrottleReasons = clockEventSWThermal | clockEventHWThermal
			dev.SMClock /= 2
		case scenario.ThrottlePower:
			dev.ThrottleReasons = clockEventHWPowerBrake
			dev.SMClock /= 2
		}
		dev.PCIeReplay = replays
		dev.GPUUtil = int64(math.Round(clamp(ds.act*104, 0, 100)))
		dev.MemCopyUtil = int64(math.Round(clamp(ds.dram*85, 0, 100)))
		if m.VideoEngines && ds.act > 0.01 {
			dev.DecUtil = int64(detrand.Hash(gm.key, "dec", k) % 3)
		}
		dev.NVLinkTotal = -1
		if m.NVLink {
			dev.NVLinkTotal = int64(gm.bootEnergy/4 + mb)
		}
		dev.CorrRows = gm.corrRows
		dev.UncorrRows = h.uncorrRows
		if h.failed {
			dev.RemapFailure = 1
		}
		if h.pending {
			dev.RemapPending = 1
		}
		dev.GREngine, dev.SMActive, dev.Tensor, dev.DRAM = ds.act, ds.sm, ds.tensor, ds.dram
		dev.PCIeRxBytes = int64(2e6 + 1.2e9*ds.tensor + 3e8*ds.load)
		dev.PCIeTxBytes = int64(1e6 + 3e8*ds.tensor + 2e8*ds.load)
	}
	if gm.whole != nil {
		s := dev
		if !h.lost {
			used := int64(math.Round(per[0].memMiB))
			s.FBReserved = m.ReservedMiB
			s.FBUsed = used
			s.FBFree = m.MemoryMiB - m.ReservedMiB - used
		}
		return []Entity{{GPU: gm.g, Sample: s, PerPod: gm.whole.perPod(k, h.lost)}}
	}
	out := make([]Entity, len(gm.gis))
	for i, mi := range gm.g.MIG {
		s := dev
		if !h.lost {
			us := per[i]
			used := int64(math.Round(us.memMiB))
			s.FBUsed = used
			s.FBFree = mi.Profile.MemoryMiB - used
			s.GREngine, s.SMActive, s.Tensor, s.DRAM = us.act, us.sm, us.tensor, us.dram
			s.GPUUtil, s.MemCopyUtil = -1, -1 // not supported on MIG
		}
		out[i] = Entity{GPU: gm.g, MIG: mi, Sample: s}
	}
	return out
}

// perPod is each consumer's own use of a unit several pods share, nil when
// one pod (or nobody) holds it.
func (u *unit) perPod(k int64, lost bool) []PodUsage {
	if len(u.consumers) < 2 || lost {
		return nil
	}
	out := make([]PodUsage, 0, len(u.consumers))
	for _, c := range u.consumers {
		s := c.pm.signal(k)
		out = append(out, PodUsage{Pod: c.pm.pod, GPUUtil: int64(math.Round(clamp(s.Activity*104, 0, 100))),
			FBUsed: int64(math.Round(s.MemFrac * c.weight * u.memMiB))})
	}
	return out
}

// NodeGPUs samples every GPU entity of an NVIDIA node at simulated time t.
func (w *World) NodeGPUs(n *fleet.Node, t float64) []Entity {
	nm := w.nodes[n]
	nm.mu.Lock()
	defer nm.mu.Unlock()
	out := make([]Entity, 0, len(nm.gpus))
	for _, gm := range nm.gpus {
		out = append(out, gm.sample(t)...)
	}
	return out
}
