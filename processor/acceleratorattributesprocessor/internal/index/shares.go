package index

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// epsilon absorbs float error when shares are summed.
const epsilon = 1e-9

// entries turns the claims on each device into holders with shares.
func (b *builder) entries() {
	keys := make([]string, 0, len(b.claims))
	for k := range b.claims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		e := b.entry(key, b.claims[key])
		b.ix.entries[key] = e
		// A MIG device held by its UUID is also found by its position, for
		// dcgm-exporter resources (hw.id <parent>/gi<N>).
		if isMIGUUID(key) {
			if pos, ok := b.migPosition(key); ok {
				if _, taken := b.ix.entries[pos]; !taken {
					b.ix.entries[pos] = e
				}
			}
		}
	}
	b.neuron()
}

// entry computes the holders of one device.
func (b *builder) entry(key string, all []*claim) *Entry {
	best := srcStatic
	for _, c := range all {
		best = min(best, c.source)
	}
	merged := map[string]*claim{}
	var order []*claim
	for _, c := range all {
		if c.source != best {
			continue
		}
		if m, ok := merged[c.consumer.ID]; ok {
			m.replicas = append(m.replicas, c.replicas...)
			m.maxRep = max(m.maxRep, c.maxRep)
			m.weight += c.weight
			if c.partID != "" && !strings.Contains(m.partID, c.partID) {
				m.partID += "," + c.partID
			}
			continue
		}
		cp := *c
		merged[c.consumer.ID] = &cp
		order = append(order, &cp)
	}
	sortClaims(order)

	strategy, replicas := "", 0
	for _, c := range order {
		if c.mode == modeReplica {
			strategy, replicas = b.replication(key, c.resource, order)
			break
		}
	}

	copies := make([]Copy, 0, len(order)+1)
	total := 0.0
	for _, c := range order {
		cp := Copy{Consumer: c.consumer, Extra: c.extra, PartitionID: c.partID}
		switch c.mode {
		case modeReplica:
			slices.Sort(c.replicas)
			c.replicas = slices.Compact(c.replicas)
			n := float64(len(c.replicas))
			cp.Share = n / float64(replicas)
			if t := b.topo.MPSThreads[key]; strategy == accelschema.PartitionMPS && t > 0 {
				cp.Share = n * t
			}
			cp.PartitionType = strategy
			cp.PartitionID = strings.Join(c.replicas, ",")
		case accelschema.PartitionMPS, accelschema.PartitionDRA:
			cp.Share = c.weight
			cp.PartitionType = c.mode
		default:
			cp.Share = 1
			if c.weight > 0 {
				cp.Share = c.weight // a share given in the mapping file
			}
		}
		total += cp.Share
		copies = append(copies, cp)
	}
	// Shares of one device never add up to more than the device: MPS
	// percentages and consumed capacities may overbook, and two holders of
	// an exclusive device (a misconfiguration) split it.
	if total > 1+epsilon {
		for i := range copies {
			copies[i].Share /= total
		}
		total = 1
	}
	e := &Entry{State: accelschema.AllocationAllocated}
	if rest := 1 - total; rest > epsilon {
		copies = append(copies, Copy{Share: rest, PartitionType: uniformType(copies)})
	}
	e.Copies = copies
	e.InPlace = len(copies) == 1 && copies[0].Consumer != nil
	return e
}

// uniformType is the partition type the remainder copy carries: that of its
// holders when they agree (time_slicing, mps, dra), else the receiver's.
func uniformType(copies []Copy) string {
	if len(copies) == 0 {
		return ""
	}
	t := copies[0].PartitionType
	for _, c := range copies[1:] {
		if c.PartitionType != t {
			return ""
		}
	}
	return t
}

// replication decides how a device with replica ids is shared and into how
// many replicas: GPU Feature Discovery's node labels first, then the
// kubelet's allocatable ids (every replica, held or not), then the replica
// ids seen held (a lower bound, so shares are overstated until more are
// seen). MPS is recognised by the sharing-strategy label or by the MPS
// daemon's data on the GPU; otherwise replicas are time slices.
func (b *builder) replication(key, resource string, order []*claim) (strategy string, replicas int) {
	base := strings.TrimSuffix(resource, ".shared")
	var labels map[string]string
	if b.node != nil {
		labels = b.node.Labels
	}
	strategy = accelschema.PartitionTimeSlicing
	switch firstLabel(labels, base+".sharing-strategy", "nvidia.com/gpu.sharing-strategy") {
	case "mps":
		strategy = accelschema.PartitionMPS
	case "time-slicing":
	default:
		if b.topo.MPSThreads[key] > 0 {
			strategy = accelschema.PartitionMPS
		}
	}
	for _, l := range []string{base + ".replicas", "nvidia.com/gpu.replicas", "cloud.google.com/gke-max-shared-clients-per-gpu"} {
		if n, err := strconv.Atoi(labels[l]); err == nil && n > 1 {
			replicas = n
			break
		}
	}
	if replicas == 0 {
		replicas = b.allocReplicas[key]
	}
	seen := len(b.seenReplicas[key])
	maxRep := -1
	for _, c := range order {
		maxRep = max(maxRep, c.maxRep)
	}
	return strategy, max(replicas, seen, maxRep+1, 1)
}

// neuron ties NeuronCores to Neuron devices: the cores of a device held
// whole are held by the same pod; a device one pod holds through all its
// cores is that pod's; a device whose cores are held otherwise (by several
// pods, or in part) is allocated, and its cores say by whom.
func (b *builder) neuron() {
	cores := map[int][]int{}
	perDevice := 0
	for dev, cs := range b.topo.NeuronCores {
		for c := range cs {
			cores[dev] = append(cores[dev], c)
		}
		perDevice = max(perDevice, len(cs))
	}
	// Cores held on devices the topology has not seen yet (no per-core
	// resources): place them by the common cores-per-device count.
	for key := range b.claims {
		g, ok := strings.CutPrefix(key, "neuroncore:")
		if !ok {
			continue
		}
		core, _ := strconv.Atoi(g)
		if b.topoHasCore(core) {
			continue
		}
		if perDevice == 0 {
			b.ix.unresolvedNeuron = true
			continue
		}
		cores[core/perDevice] = append(cores[core/perDevice], core)
	}
	for dev, cs := range cores {
		slices.Sort(cs)
		cs = slices.Compact(cs)
		if whole, ok := b.ix.entries[neuronKey(dev)]; ok {
			for _, c := range cs {
				if _, own := b.ix.entries[neuronCoreKey(c)]; !own {
					b.ix.entries[neuronCoreKey(c)] = whole
				}
			}
			continue
		}
		total := len(cs)
		if known := len(b.topo.NeuronCores[dev]); known > 0 {
			total = known
		} else if perDevice > 0 {
			total = perDevice
		}
		held := map[*Consumer][]int{}
		var order []*Consumer
		for _, c := range cs {
			e, ok := b.ix.entries[neuronCoreKey(c)]
			if !ok {
				continue
			}
			for _, cp := range e.Copies {
				if cp.Consumer == nil {
					continue
				}
				if _, seen := held[cp.Consumer]; !seen {
					order = append(order, cp.Consumer)
				}
				held[cp.Consumer] = append(held[cp.Consumer], c)
			}
		}
		switch {
		case len(order) == 0:
		case len(order) == 1 && len(held[order[0]]) == total:
			// One pod holds every core: the device is that pod's, in place.
			c := order[0]
			b.ix.entries[neuronKey(dev)] = &Entry{State: accelschema.AllocationAllocated, InPlace: true,
				Copies: []Copy{{Consumer: c, Share: 1, PartitionType: accelschema.PartitionNeuronCore, PartitionID: coreList(held[c])}}}
		default:
			// The cores are the partitions, each with its holder and share
			// (the receiver reports every core as a resource of its own,
			// which is how the topology knows them): the device's own
			// resource is not copied per holder, or the holders would be
			// counted on the device and again on its cores. Like a MIG-enabled
			// GPU, it is allocated while any of its cores is held.
			b.ix.entries[neuronKey(dev)] = &Entry{State: accelschema.AllocationAllocated}
		}
	}
}

func coreList(cores []int) string {
	ids := make([]string, len(cores))
	for i, core := range cores {
		ids[i] = strconv.Itoa(core)
	}
	return strings.Join(ids, ",")
}

func (b *builder) topoHasCore(core int) bool {
	for _, cs := range b.topo.NeuronCores {
		if cs[core] {
			return true
		}
	}
	return false
}
