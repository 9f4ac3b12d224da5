package sim

import (
	"math"
	"regexp"
	"strconv"
	"sync"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/detrand"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/scenario"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// World is the simulation of one fleet. It is safe for concurrent use: each
// node's device counters and each pod's inference counters have their own
// lock, so servers of different nodes never wait on each other.
type World struct {
	Fleet *fleet.Fleet
	seed  uint64
	pods  map[*fleet.Pod]*podModel
	nodes map[*fleet.Node]*nodeModel
}

type podModel struct {
	pod *fleet.Pod
	key uint64
	// phase offsets periodic profiles so that pods do not burst in step.
	phase float64
	// stallAt is the simulated second a held device failed fatally, or -1.
	stallAt float64
	// capacity is the decode throughput (tokens/s) of what the pod holds.
	capacity  float64
	inference *inferenceModel
	// gpus and units are the GPUs and the units (a whole GPU, a MIG
	// instance) it holds: their faults and their other consumers slow it.
	gpus  []*gpuModel
	units []*unit
}

type nodeModel struct {
	mu      sync.Mutex
	node    *fleet.Node
	gpus    []*gpuModel
	neuron  *neuronModel
	runtime []*runtimeModel
}

// NewWorld prepares the simulation of a fleet.
func NewWorld(f *fleet.Fleet) *World {
	w := &World{Fleet: f, seed: f.Seed, pods: map[*fleet.Pod]*podModel{}, nodes: map[*fleet.Node]*nodeModel{}}
	for _, p := range f.Pods {
		w.pods[p] = &podModel{
			pod:     p,
			key:     detrand.Hash(f.Seed, "podsignal", p.UID),
			phase:   detrand.Unit(detrand.Hash(f.Seed, "phase", p.UID)),
			stallAt: -1,
		}
	}
	for _, n := range f.Nodes {
		nm := &nodeModel{node: n}
		w.nodes[n] = nm
		for _, g := range n.GPUs {
			nm.gpus = append(nm.gpus, w.newGPUModel(g))
		}
		if n.Shape != nil {
			w.newNeuronModel(nm)
		}
	}
	for _, pm := range w.pods {
		if pm.pod.Inference != nil {
			pm.inference = newInferenceModel(pm)
		}
	}
	return w
}

// unit is what one consumer set shares: a whole GPU or one MIG instance.
type unit struct {
	key       uint64
	memMiB    float64
	consumers []consumer
	multiGPU  bool // a consumer spans several GPUs (NVLink traffic)
}

type consumer struct {
	pm     *podModel
	weight float64 // nominal fraction of the unit it holds
	jitter uint64
}

func (w *World) newUnit(key uint64, memMiB float64, holders []fleet.Holder, replicas int, capPerUnit float64) *unit {
	u := &unit{key: key, memMiB: memMiB}
	byPod := map[*fleet.Pod]int{}
	order := []*fleet.Pod{}
	for _, h := range holders {
		if _, ok := byPod[h.Pod]; !ok {
			order = append(order, h.Pod)
		}
		byPod[h.Pod]++
	}
	for _, p := range order {
		pm := w.pods[p]
		weight := holderWeight(holders, p, byPod[p], replicas)
		pm.capacity += capPerUnit * weight
		if heldUnits(p) > 1 {
			u.multiGPU = true
		}
		u.consumers = append(u.consumers, consumer{pm: pm, weight: weight, jitter: detrand.Hash(key, p.UID)})
	}
	return u
}

// heldUnits counts the GPUs and MIG instances a pod holds.
func heldUnits(p *fleet.Pod) int {
	n := 0
	for _, c := range p.Containers {
		n += len(c.GPUs) + len(c.MIG)
		seen := map[*fleet.GPU]bool{}
		for _, r := range c.Replicas {
			if !seen[r.GPU] {
				seen[r.GPU] = true
				n++
			}
		}
	}
	return n
}

// usage is a unit's state at one tick.
type usage struct {
	act, sm, tensor, dram float64
	memMiB                float64
	load                  float64
	held                  bool
}

func (u *unit) usage(k int64) usage {
	var us usage
	for _, c := range u.consumers {
		s := c.pm.signal(k)
		us.held = true
		if s.Activity > 0 {
			j := 0.012 * detrand.White(c.jitter, k)
			us.act += clamp(s.Activity+j, 0, 1)
			us.sm += clamp(s.SMActive+j, 0, 1)
			us.tensor += s.Tensor
			us.dram += s.DRAM
		}
		us.load = math.Max(us.load, s.Load)
		us.memMiB += s.MemFrac * c.weight * u.memMiB
	}
	// Time-sliced pods compete for one engine: the device cannot be more
	// than fully busy.
	us.act = math.Min(us.act, 0.99)
	us.sm = math.Min(us.sm, 0.99)
	us.tensor = math.Min(us.tensor, 0.95)
	us.dram = math.Min(us.dram, 0.95)
	us.memMiB = math.Min(us.memMiB, u.memMiB)
	return us
}

// fatal reports whether a GPU failure crashes the applications on it.
func fatal(f fleet.Failure) bool {
	if f.RowRemap != "" || f.Throttle != "" {
		return false
	}
	c := xid.Lookup(f.XID)
	return c.Action != accelschema.ActionNone && c.Action != accelschema.ActionMonitor
}

// markStall records, for every pod holding the device, the first fatal
// failure time.
func markStall(pm *podModel, failures []fleet.Failure, isFatal func(fleet.Failure) bool) {
	for _, f := range failures {
		if !isFatal(f) {
			continue
		}
		at := f.At.Seconds()
		if pm.stallAt < 0 || at < pm.stallAt {
			pm.stallAt = at
		}
		return
	}
}

var paramsRE = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)B\b`)

// modelSpeed scales throughput by model size relative to an 8B model.
func modelSpeed(model string) float64 {
	m := paramsRE.FindStringSubmatch(model)
	if m == nil {
		return 1
	}
	b, err := strconv.ParseFloat(m[1], 64)
	if err != nil || b <= 0 {
		return 1
	}
	return clamp(8/b, 0.08, 4)
}

func neuronFatal(f fleet.Failure) bool {
	return f.ECC == scenario.ECCMemUncorrected || f.ECC == scenario.ECCSRAMUncorrected
}

// holderWeight is the nominal fraction of a unit the pod holds: all of it,
// its replicas out of the GPU's replicas, or an equal part of a shared claim.
func holderWeight(holders []fleet.Holder, p *fleet.Pod, count, replicas int) float64 {
	for _, h := range holders {
		if h.Pod != p {
			continue
		}
		switch {
		case h.Replica >= 0 && replicas > 0:
			return float64(count) / float64(replicas)
		case h.Claim != nil && len(h.Claim.Consumers) > 1:
			return 1 / float64(len(h.Claim.Consumers))
		}
		return 1
	}
	return 1
}
