package index

import "maps"

// Topology is what the processor learns from the resources themselves and
// cannot get from the sources: how MIG UUIDs relate to dcgm-exporter's
// <parent>/gi<N> ids, which GPUs are split by MIG, which NeuronCores belong
// to which Neuron device, and the MPS active-thread share the MPS daemon
// reports for a GPU. It is bounded by the devices on the node.
type Topology struct {
	// MIGPos maps a MIG UUID to its <parent UUID>/gi<N> position.
	MIGPos map[string]string
	// MIGParents maps a MIG-enabled GPU's UUID to the keys of its instances.
	MIGParents map[string]map[string]bool
	// NeuronCores maps a Neuron device index to its global core indices.
	NeuronCores map[int]map[int]bool
	// MPSThreads maps a GPU UUID to the MPS daemon's default active-thread fraction.
	MPSThreads map[string]float64
}

// NewTopology returns an empty topology.
func NewTopology() *Topology {
	return &Topology{
		MIGPos:      map[string]string{},
		MIGParents:  map[string]map[string]bool{},
		NeuronCores: map[int]map[int]bool{},
		MPSThreads:  map[string]float64{},
	}
}

// Clone returns a deep copy (topologies are replaced, never changed in place,
// so readers need no lock).
func (t *Topology) Clone() *Topology {
	c := &Topology{
		MIGPos:      maps.Clone(t.MIGPos),
		MIGParents:  make(map[string]map[string]bool, len(t.MIGParents)),
		NeuronCores: make(map[int]map[int]bool, len(t.NeuronCores)),
		MPSThreads:  maps.Clone(t.MPSThreads),
	}
	for k, v := range t.MIGParents {
		c.MIGParents[k] = maps.Clone(v)
	}
	for k, v := range t.NeuronCores {
		c.NeuronCores[k] = maps.Clone(v)
	}
	return c
}

// Observation is what one resource teaches.
type Observation struct {
	Identity
	// MPSThreads > 0 when the resource carries the MPS daemon's active-thread gauge.
	MPSThreads float64
}

// Knows reports whether the topology already has everything o teaches.
func (t *Topology) Knows(o Observation) bool {
	if o.Kind == kindNeuron {
		if o.CoreIndex >= 0 && o.DeviceIndex >= 0 {
			return t.NeuronCores[o.DeviceIndex][o.CoreIndex]
		}
		return true
	}
	if o.Parent != "" && o.GI >= 0 {
		pos := posKey(o.Parent, o.GI)
		if isMIGUUID(o.HWID) && t.MIGPos[o.HWID] != pos {
			return false
		}
		if !t.MIGParents[o.Parent][o.HWID] {
			return false
		}
	}
	if o.MPSThreads > 0 && t.MPSThreads[o.HWID] != o.MPSThreads {
		return false
	}
	return true
}

// Learn records o.
func (t *Topology) Learn(o Observation) {
	if o.Kind == kindNeuron {
		if o.CoreIndex >= 0 && o.DeviceIndex >= 0 {
			if t.NeuronCores[o.DeviceIndex] == nil {
				t.NeuronCores[o.DeviceIndex] = map[int]bool{}
			}
			t.NeuronCores[o.DeviceIndex][o.CoreIndex] = true
		}
		return
	}
	if o.Parent != "" && o.GI >= 0 {
		if isMIGUUID(o.HWID) {
			t.MIGPos[o.HWID] = posKey(o.Parent, o.GI)
		}
		if t.MIGParents[o.Parent] == nil {
			t.MIGParents[o.Parent] = map[string]bool{}
		}
		t.MIGParents[o.Parent][o.HWID] = true
	}
	if o.MPSThreads > 0 {
		t.MPSThreads[o.HWID] = o.MPSThreads
	}
}

// Forget drops a device and everything learned about it (the device is
// gone: MIG reconfigured, GPU removed).
func (t *Topology) Forget(hwID string) {
	delete(t.MIGPos, hwID)
	delete(t.MIGParents, hwID)
	for _, children := range t.MIGParents {
		delete(children, hwID)
	}
	delete(t.MPSThreads, hwID)
}

func isMIGUUID(s string) bool { return len(s) > 4 && s[:4] == "MIG-" }
