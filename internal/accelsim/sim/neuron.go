package sim

import (
	"math"
	"sort"
	"strconv"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/detrand"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
)

type neuronModel struct {
	coreOwner []*podModel // by global logical core
	coreKey   []uint64
	deviceKey []uint64
}

// NeuronRuntime is one Neuron application (a pod's process) on a node.
type NeuronRuntime struct {
	Pod *fleet.Pod
	PID int
	// Tag is NEURON_PROCESS_TAG, else the pid.
	Tag string
	// Cores are the global logical cores it uses, sorted.
	Cores []int
	model *runtimeModel
}

type runtimeModel struct {
	pm    *podModel
	execs accumulator
}

func (w *World) newNeuronModel(nm *nodeModel) {
	n := nm.node
	cores := n.CoreCount()
	m := &neuronModel{coreOwner: make([]*podModel, cores), coreKey: make([]uint64, cores), deviceKey: make([]uint64, len(n.NeuronDevices))}
	for c := range m.coreKey {
		m.coreKey[c] = detrand.Hash(w.seed, "core", n.Name, c)
	}
	for d := range m.deviceKey {
		m.deviceKey[d] = detrand.Hash(w.seed, "neurondev", n.Name, d)
	}
	for _, p := range n.Pods {
		pm := w.pods[p]
		var held []int
		for _, c := range p.Containers {
			held = append(held, c.NeuronCores...)
		}
		if len(held) == 0 {
			continue
		}
		sort.Ints(held)
		for _, c := range held {
			m.coreOwner[c] = pm
		}
		pm.capacity += float64(len(held)) * n.Shape.GenTokensPerSecPerCore
		for _, c := range held {
			markStall(pm, n.NeuronDevices[c/n.Shape.CoresPerDevice].Failures, neuronFatal)
		}
		nm.runtime = append(nm.runtime, &runtimeModel{pm: pm})
	}
	nm.neuron = m
}

// NeuronRuntimes lists the node's Neuron applications in pod order.
func (w *World) NeuronRuntimes(n *fleet.Node) []*NeuronRuntime {
	nm := w.nodes[n]
	var out []*NeuronRuntime
	for _, rm := range nm.runtime {
		p := rm.pm.pod
		var cores []int
		for _, c := range p.Containers {
			cores = append(cores, c.NeuronCores...)
		}
		sort.Ints(cores)
		tag := p.NeuronTag
		if tag == "" {
			tag = strconv.Itoa(p.PID)
		}
		out = append(out, &NeuronRuntime{Pod: p, PID: p.PID, Tag: tag, Cores: cores, model: rm})
	}
	return out
}

// CoreUtilization is a logical core's utilisation in percent at time t, with
// the per-physical-core split of Trn2 (LNC=2) in phys.
func (w *World) CoreUtilization(n *fleet.Node, core int, t float64) (util float64, phys []float64) {
	m := w.nodes[n].neuron
	k := Tick(t)
	per := n.Shape.PhysicalPerLogical
	phys = make([]float64, per)
	pm := m.coreOwner[core]
	if pm == nil {
		return 0, phys
	}
	s := pm.signal(k)
	if s.Activity == 0 {
		return 0, phys
	}
	util = clamp((s.Activity+0.02*detrand.White(m.coreKey[core], k))*100, 0, 100)
	for i := range phys {
		// The physical halves of a logical core are not equally busy.
		skew := 0.08 * detrand.White(m.coreKey[core]^uint64(i+1), k)
		if i%2 == 1 {
			skew = -skew
		}
		phys[i] = clamp(util*(1+skew), 0, 100)
	}
	return util, phys
}

// CoreMemory is the device memory a runtime holds on one core, by category.
type CoreMemory struct {
	Constants, ModelCode, SharedScratchpad, RuntimeMemory, Tensors int64
}

// Total is the sum of the categories.
func (c CoreMemory) Total() int64 {
	return c.Constants + c.ModelCode + c.SharedScratchpad + c.RuntimeMemory + c.Tensors
}

// RuntimeCoreMemory is the memory runtime rt holds on core at time t.
func (w *World) RuntimeCoreMemory(n *fleet.Node, rt *NeuronRuntime, core int, t float64) CoreMemory {
	s := rt.model.pm.signal(Tick(t))
	perCore := float64(n.Shape.DeviceMemoryBytes) / float64(n.Shape.CoresPerDevice)
	used := s.MemFrac * perCore
	return CoreMemory{
		Constants:        int64(used * 0.44),
		ModelCode:        int64(used * 0.07),
		SharedScratchpad: int64(used * 0.05),
		RuntimeMemory:    int64(used * 0.02),
		Tensors:          int64(used * 0.42),
	}
}

// Percentiles are execution latencies in seconds.
type Percentiles struct {
	P0, P1, P25, P50, P75, P99, P100 float64
}

// ExecStats are a runtime's executions in a period (deltas).
type ExecStats struct {
	Completed, CompletedWithErr, CompletedWithNumErr, TimedOut, IncorrectInput, FailedToQueue int64
	Generic, Numerical, Transient, Model, Runtime, Hardware                                   int64
	// Total and Device are nil when nothing ran in the period.
	Total, Device *Percentiles
}

func (rm *runtimeModel) rate(k int64) float64 {
	s := rm.pm.signal(k)
	if s.Stalled {
		return 0
	}
	if scenario.IsInference(rm.pm.pod.Workload.Profile) {
		return s.Load * rm.pm.capacity / 200
	}
	return s.Activity * 2.5
}

// RuntimeExecutions are runtime rt's executions in the simulated period
// (t0, t1]. Calls must come in increasing t0 for the counts to be cheap.
func (w *World) RuntimeExecutions(n *fleet.Node, rt *NeuronRuntime, t0, t1 float64) ExecStats {
	nm := w.nodes[n]
	nm.mu.Lock()
	defer nm.mu.Unlock()
	rm := rt.model
	e0 := math.Floor(rm.execs.at(t0, rm.rate))
	e1 := math.Floor(rm.execs.at(t1, rm.rate))
	var st ExecStats
	st.Completed = int64(e1 - e0)
	key := rm.pm.key
	k := Tick(t1)
	// A transient error now and then, as ECC corrections cause.
	if st.Completed > 0 && detrand.Unit(detrand.Hash(key, "transient", k)) < 0.02 {
		st.Transient = 1
		st.CompletedWithErr = 1
		st.Completed--
	}
	for _, d := range rt.devices(n) {
		for _, f := range n.NeuronDevices[d].Failures {
			if at := f.At.Seconds(); at > t0 && at <= t1 && neuronFatal(f) {
				st.Hardware += int64(f.Count)
				st.CompletedWithErr += int64(f.Count)
			}
		}
	}
	if st.Completed > 0 {
		s := rm.pm.signal(k)
		median, sigma := 0.35, 0.12 // a training step
		if scenario.IsInference(rm.pm.pod.Workload.Profile) {
			median, sigma = 0.008*(1+1.5*s.Load), 0.3
		}
		st.Total = percentiles(median, sigma)
		st.Device = percentiles(median*0.9, sigma)
	}
	return st
}

func percentiles(median, sigma float64) *Percentiles {
	q := func(z float64) float64 { return logNormalQuantile(median, sigma, z) }
	return &Percentiles{P0: q(-3.1), P1: q(-2.326), P25: q(-0.674), P50: median, P75: q(0.674), P99: q(2.326), P100: q(3.3)}
}

// RuntimeVCPU is a runtime's vCPU use in percent at time t.
func (w *World) RuntimeVCPU(rt *NeuronRuntime, t float64) (user, system float64) {
	k := Tick(t)
	s := rt.model.pm.signal(k)
	j := detrand.White(rt.model.pm.key^21, k)
	return clamp(12+55*s.Activity+3*j, 0, 100), clamp(3+9*s.Activity+j, 0, 100)
}

// ECCCounts are hardware ECC events of one device in a period (deltas).
type ECCCounts struct {
	MemCorrected, MemUncorrected, SRAMCorrected, SRAMUncorrected int64
}

// DeviceECC counts device d's ECC events in the simulated period (t0, t1]:
// rare corrected events, and the scenario's failures.
func (w *World) DeviceECC(n *fleet.Node, d int, t0, t1 float64) ECCCounts {
	m := w.nodes[n].neuron
	var c ECCCounts
	for k := Tick(t0) + 1; k <= Tick(t1); k++ {
		if detrand.Unit(detrand.Hash(m.deviceKey[d], "sbe", k)) < 0.0015 {
			c.MemCorrected++
		}
	}
	for _, f := range n.NeuronDevices[d].Failures {
		if at := f.At.Seconds(); at > t0 && at <= t1 {
			switch f.ECC {
			case scenario.ECCMemCorrected:
				c.MemCorrected += int64(f.Count)
			case scenario.ECCMemUncorrected:
				c.MemUncorrected += int64(f.Count)
			case scenario.ECCSRAMCorrected:
				c.SRAMCorrected += int64(f.Count)
			case scenario.ECCSRAMUncorrected:
				c.SRAMUncorrected += int64(f.Count)
			}
		}
	}
	return c
}

// HostActivity is the mean activity of the node's busy cores, which drives
// the host's CPU and memory use.
func (w *World) HostActivity(n *fleet.Node, t float64) float64 {
	m := w.nodes[n].neuron
	k := Tick(t)
	sum, cnt := 0.0, 0
	seen := map[*podModel]bool{}
	for _, pm := range m.coreOwner {
		if pm == nil || seen[pm] {
			continue
		}
		seen[pm] = true
		sum += pm.signal(k).Activity
		cnt++
	}
	if cnt == 0 {
		return 0
	}
	return sum / float64(cnt)
}

// Noise exposes the deterministic per-node noise for host-level values.
func (w *World) Noise(n *fleet.Node, what string, i int, t float64) float64 {
	return detrand.White(detrand.Hash(w.seed, "host", n.Name, what, i), Tick(t))
}

// devices are the Neuron devices the runtime's cores are on, sorted.
func (rt *NeuronRuntime) devices(n *fleet.Node) []int {
	var out []int
	for _, c := range rt.Cores {
		d := c / n.Shape.CoresPerDevice
		if len(out) == 0 || out[len(out)-1] != d {
			out = append(out, d)
		}
	}
	return out
}
