package fleet

import (
	"cmp"
	"math"
	"runtime"
	"slices"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Group is one physical device with what hangs under it: partitions (MIG
// instances, NeuronCores) and consumer copies (time-slicing, MPS, DRA
// sharing), each partition with its own copies. Counting devices, shares,
// cost and waste over groups counts each physical quantity once
// (internal/accelschema: counting.go, partition.go).
type Group struct {
	Device *Resource
	// Synthetic: no resource of the device itself was seen, only its
	// partitions; Device is built from their identity.
	Synthetic  bool
	Copies     []*Resource
	Partitions []*Part
}

// Part is a partition and the consumer copies of it.
type Part struct {
	*Resource
	Copies []*Resource
}

type groupKey struct{ node, hwID string }

// Groups builds the device groups of a snapshot, sorted by node, device
// index and id.
func Groups(snap *Snapshot) []*Group {
	res := snap.Resources
	byKey := make(map[groupKey]*Group, len(res))
	order := make([]*Group, 0, len(res))
	// Every group comes from at least one resource: one allocation for
	// all of them (a rebuild in the background should leave the garbage
	// collector, and the requests it slows, little to do).
	slab := make([]Group, 0, len(res))
	newGroup := func(g Group) *Group {
		slab = append(slab, g)
		return &slab[len(slab)-1]
	}
	device := func(node, hwID string, like *Resource) *Group {
		k := groupKey{node, hwID}
		if g, ok := byKey[k]; ok {
			return g
		}
		// A partition or copy seen before (or without) its device: the
		// device is described by what its children say about it.
		id := like.Identity
		id.HWID, id.Parent, id.PartitionType, id.PartitionID, id.Profile = hwID, "", s.PartitionNone, "", ""
		id.Share, id.Allocation = 0, ""
		id.Namespace, id.Pod, id.PodUID, id.Container, id.Team, id.Workload, id.WorkType = "", "", "", "", "", "", ""
		g := newGroup(Group{Device: &Resource{Identity: id, Health: ""}, Synthetic: true})
		byKey[k] = g
		order = append(order, g)
		return g
	}
	// Devices first, so that children find their parent's real resource.
	for i := range res {
		r := &res[i]
		if !s.IsDeviceResource(r.HWID, r.Parent) {
			continue
		}
		k := groupKey{r.Node, r.HWID}
		if g, ok := byKey[k]; ok && !g.Synthetic {
			continue // a duplicate resource: the first counts
		}
		g := newGroup(Group{Device: r})
		byKey[k] = g
		order = append(order, g)
	}
	parts := map[groupKey]*Part{}
	for i := range res {
		r := &res[i]
		if r.HWID == "" || r.Parent == "" || s.IsConsumerCopy(r.HWID, r.Parent, r.PartitionType) {
			continue
		}
		g := device(r.Node, r.Parent, r)
		p := &Part{Resource: r}
		g.Partitions = append(g.Partitions, p)
		parts[groupKey{r.Node, r.HWID}] = p
	}
	for i := range res {
		r := &res[i]
		if r.HWID == "" || !s.IsConsumerCopy(r.HWID, r.Parent, r.PartitionType) {
			continue
		}
		// A copy of a partition (a DRA share of a MIG instance) names the
		// instance as its hw.id; a copy of a whole device names the device.
		if p, ok := parts[groupKey{r.Node, r.HWID}]; ok {
			p.Copies = append(p.Copies, r)
			continue
		}
		g := device(r.Node, r.Parent, r)
		g.Copies = append(g.Copies, r)
	}
	for i, g := range order {
		if i%yieldEvery == yieldEvery-1 {
			runtime.Gosched() // see yieldEvery
		}
		slices.SortFunc(g.Partitions, func(a, b *Part) int { return cmpID(a.Resource, b.Resource) })
		slices.SortFunc(g.Copies, cmpID)
		for _, p := range g.Partitions {
			slices.SortFunc(p.Copies, cmpID)
		}
	}
	slices.SortFunc(order, func(a, b *Group) int {
		return cmp.Or(cmp.Compare(a.Device.Node, b.Device.Node), cmpID(a.Device, b.Device))
	})
	return order
}

// yieldEvery is how many groups a rebuild handles between yields to the
// requests that wait for a processor (a two-core gateway has one to spare).
const yieldEvery = 1024

func cmpID(a, b *Resource) int {
	ai, bi := a.Index, b.Index
	if ai < 0 {
		ai = math.MaxInt
	}
	if bi < 0 {
		bi = math.MaxInt
	}
	return cmp.Or(cmp.Compare(ai, bi), cmp.Compare(a.HWID, b.HWID), cmp.Compare(a.PartitionID, b.PartitionID), cmp.Compare(a.Pod, b.Pod))
}

// each visits every resource of the group once: the device (unless
// synthetic), its copies, each partition and its copies.
func (g *Group) each(fn func(*Resource)) {
	if !g.Synthetic {
		fn(g.Device)
	}
	for _, c := range g.Copies {
		fn(c)
	}
	for _, p := range g.Partitions {
		fn(p.Resource)
		for _, c := range p.Copies {
			fn(c)
		}
	}
}

// share is what a resource stands for in device-equivalents. A resource
// without the attribute is a whole device when nothing hangs under it, and
// nothing when it does (its children carry the shares).
func (g *Group) share(r *Resource) float64 {
	if !math.IsNaN(r.Share) {
		return r.Share
	}
	if r == g.Device && len(g.Partitions) == 0 && len(g.Copies) == 0 {
		return 1
	}
	return 0
}

// utilizationOf is a resource's own utilization, else (a consumer copy
// nothing measured for) its device's or partition's.
func (g *Group) utilizationOf(r, under *Resource) *float64 {
	if r.Utilization != nil {
		return r.Utilization
	}
	if under != nil && under.Utilization != nil {
		return under.Utilization
	}
	return nil
}

// Allocation categories.
const (
	AllocInUse       = "in_use"
	AllocIdle        = "idle_allocated"
	AllocUnallocated = "unallocated"
	AllocReserved    = "reserved"
	AllocMixed       = "mixed"
)

// allocationOf classifies one resource.
func allocationOf(r *Resource, util *float64, idle float64) string {
	state := r.Allocation
	if state == "" {
		if r.Pod != "" {
			state = s.AllocationAllocated
		} else {
			state = s.AllocationUnallocated
		}
	}
	switch state {
	case s.AllocationReserved:
		return AllocReserved
	case s.AllocationUnallocated:
		return AllocUnallocated
	}
	if util != nil && *util >= idle {
		return AllocInUse
	}
	return AllocIdle
}

// Allocation is device-equivalents by category.
type Allocation struct {
	InUse       float64 `json:"in_use"`
	Idle        float64 `json:"idle_allocated"`
	Unallocated float64 `json:"unallocated"`
	Reserved    float64 `json:"reserved"`
}

func (a *Allocation) add(cat string, share float64) {
	switch cat {
	case AllocInUse:
		a.InUse += share
	case AllocIdle:
		a.Idle += share
	case AllocUnallocated:
		a.Unallocated += share
	case AllocReserved:
		a.Reserved += share
	}
}

func (a Allocation) allocated() float64 { return a.InUse + a.Idle }

// visitShares calls fn for every resource of the group with its share,
// allocation category and utilization.
func (g *Group) visitShares(idle float64, fn func(r *Resource, share float64, cat string, util *float64)) {
	visit := func(r, under *Resource) {
		u := g.utilizationOf(r, under)
		fn(r, g.share(r), allocationOf(r, u, idle), u)
	}
	if !g.Synthetic {
		visit(g.Device, nil)
	}
	for _, c := range g.Copies {
		visit(c, g.Device)
	}
	for _, p := range g.Partitions {
		visit(p.Resource, nil)
		for _, c := range p.Copies {
			visit(c, p.Resource)
		}
	}
}

// allocation sums the group's shares by category.
func (g *Group) allocation(idle float64) Allocation {
	var a Allocation
	g.visitShares(idle, func(_ *Resource, share float64, cat string, _ *float64) { a.add(cat, share) })
	return a
}

// money sums the group's price and waste rates: each resource carries its
// own share of the device's price, so the sum pays for the device once.
func (g *Group) money() (price float64, waste map[string]float64) {
	waste = map[string]float64{}
	return g.addMoney(waste), waste
}

// addMoney adds the group's waste rates into waste and returns its price.
func (g *Group) addMoney(waste map[string]float64) (price float64) {
	g.each(func(r *Resource) {
		if r.PricePerHour != nil {
			price += *r.PricePerHour
		}
		for k, v := range r.WastePerHour {
			waste[k] += v
		}
	})
	return price
}

// real reports whether r is a resource that was received (not the
// synthetic device of partitions seen without their device).
func (g *Group) real(r *Resource) bool { return r != g.Device || !g.Synthetic }
