package fleet

import (
	"math"
)

// Holder is a pod (or task) holding a device, partition or share of one.
type Holder struct {
	Namespace    string   `json:"namespace"`
	Pod          string   `json:"pod"`
	PodUID       string   `json:"pod_uid"`
	Container    string   `json:"container"`
	Team         string   `json:"team"`
	Workload     string   `json:"workload"`
	WorkloadType string   `json:"workload_type"`
	Share        float64  `json:"share"`
	PartitionID  *string  `json:"partition_id"`
	Utilization  *float64 `json:"utilization"`
}

// Tile is one device or partition in the grid.
type Tile struct {
	ID                string   `json:"id"`
	Node              string   `json:"node"`
	Index             *int     `json:"index"`
	Kind              string   `json:"kind"`
	Family            string   `json:"family"`
	Model             string   `json:"model"`
	PartitionType     string   `json:"partition_type"`
	Profile           *string  `json:"profile"`
	Health            string   `json:"health"`
	Utilization       *float64 `json:"utilization"`
	MemoryUtilization *float64 `json:"memory_utilization"`
	Allocation        string   `json:"allocation"`
	AllocatedShare    float64  `json:"allocated_share"`
	CostPerHour       float64  `json:"cost_per_hour"`
	WastePerHour      float64  `json:"waste_per_hour"`
	Holders           []Holder `json:"holders"`
	OpenFindings      int      `json:"open_findings"`
	Partitions        []Tile   `json:"partitions"`
}

// NodeTiles is one node of the grid.
type NodeTiles struct {
	Node         string  `json:"node"`
	Cluster      string  `json:"cluster"`
	InstanceType string  `json:"instance_type"`
	Zone         string  `json:"zone"`
	Devices      int     `json:"devices"`
	CostPerHour  float64 `json:"cost_per_hour"`
	Tiles        []Tile  `json:"tiles"`
}

// DevicesPage is GET /api/v1/devices.
type DevicesPage struct {
	TotalNodes   int         `json:"total_nodes"`
	TotalDevices int         `json:"total_devices"`
	Page         int         `json:"page"`
	PageSize     int         `json:"page_size"`
	Nodes        []NodeTiles `json:"nodes"`
}

func holderOf(r *Resource, share float64) Holder {
	h := Holder{Namespace: r.Namespace, Pod: r.Pod, PodUID: r.PodUID, Container: r.Container, Team: r.Team,
		Workload: r.Workload, WorkloadType: r.WorkType, Share: Round4(share), Utilization: Round4Ptr(r.Utilization)}
	if r.Parent != "" {
		h.PartitionID = nonEmpty(r.PartitionID)
	}
	return h
}

// holders lists who holds r itself and its copies.
func holders(g *Group, r *Resource, copies []*Resource) []Holder {
	out := []Holder{}
	// A device's own resource that names a pod but holds no share (the
	// pod holds its NeuronCores or MIG instances) lists no holder: its
	// partitions do.
	if r.Pod != "" && g.real(r) && (g.share(r) > 0 || r != g.Device || len(g.Partitions) == 0) {
		out = append(out, holderOf(r, g.share(r)))
	}
	for _, c := range copies {
		if c.Pod != "" {
			out = append(out, holderOf(c, g.share(c)))
		}
	}
	return out
}

// tileOf builds a tile for a resource and the copies under it.
func (v *View) tileOf(g *Group, r *Resource, copies []*Resource, kind, health string) Tile {
	var a Allocation
	var price, waste float64
	visit := func(x, under *Resource) {
		u := g.utilizationOf(x, under)
		a.add(allocationOf(x, u, v.Idle), g.share(x))
		if x.PricePerHour != nil {
			price += *x.PricePerHour
		}
		waste += sum(x.WastePerHour)
	}
	if g.real(r) {
		visit(r, nil)
	}
	for _, c := range copies {
		visit(c, r)
	}
	t := Tile{ID: r.HWID, Node: r.Node, Kind: kind, Family: r.Kind, Model: r.Model, PartitionType: r.PartitionType,
		Profile: nonEmpty(r.Profile), Health: health, Utilization: Round4Ptr(r.Utilization), MemoryUtilization: Round4Ptr(memUtil(r)),
		Allocation: category(a), AllocatedShare: Round4(a.allocated()), CostPerHour: Round4(price), WastePerHour: Round4(waste),
		Holders: holders(g, r, copies), Partitions: []Tile{}}
	if r.Index >= 0 {
		t.Index = ptr(r.Index)
	}
	if t.PartitionType == "" {
		t.PartitionType = "none"
	}
	if kind == "device" {
		t.OpenFindings = v.openFindingsOn(r.Node, r.HWID, "")
	}
	return t
}

func memUtil(r *Resource) *float64 {
	if r.MemoryUtilization != nil {
		return r.MemoryUtilization
	}
	if r.MemoryUsed != nil && r.MemoryLimit != nil && *r.MemoryLimit > 0 {
		return ptr(*r.MemoryUsed / *r.MemoryLimit)
	}
	return nil
}

// category names a tile's allocation: the one category its shares are in,
// or mixed.
func category(a Allocation) string {
	cats := []struct {
		name  string
		share float64
	}{{AllocInUse, a.InUse}, {AllocIdle, a.Idle}, {AllocUnallocated, a.Unallocated}, {AllocReserved, a.Reserved}}
	found, n := AllocUnallocated, 0
	for _, c := range cats {
		if c.share > 1e-9 {
			found = c.name
			n++
		}
	}
	if n > 1 {
		return AllocMixed
	}
	return found
}

// Tile is a group's device tile with its partitions nested.
func (v *View) Tile(g *Group) Tile {
	health, _ := v.deviceHealth(g)
	t := v.tileOf(g, g.Device, g.Copies, "device", health)
	var price, waste float64
	var a Allocation
	price, waste = t.CostPerHour, t.WastePerHour
	for _, p := range g.Partitions {
		pt := v.tileOf(g, p.Resource, p.Copies, "partition", health)
		t.Partitions = append(t.Partitions, pt)
		price += pt.CostPerHour
		waste += pt.WastePerHour
	}
	a = g.allocation(v.Idle)
	t.Allocation, t.AllocatedShare = category(a), Round4(a.allocated())
	t.CostPerHour, t.WastePerHour = Round4(price), Round4(waste)
	if t.Utilization == nil && len(g.Partitions) > 0 {
		t.Utilization = partitionsMean(g)
	}
	return t
}

// partitionsMean is a partitioned device's utilization when the device
// itself reports none (MIG): the share-weighted mean of its partitions'.
func partitionsMean(g *Group) *float64 {
	var num, den float64
	for _, p := range g.Partitions {
		if p.Utilization == nil {
			continue
		}
		w := g.share(p.Resource)
		if w <= 0 || math.IsNaN(w) {
			w = 1
		}
		num += *p.Utilization * w
		den += w
	}
	if den == 0 {
		return nil
	}
	return ptr(Round4(num / den))
}

// Devices pages the grid by node.
func (v *View) Devices(f Filter, page, size int) DevicesPage {
	var nodes []NodeTiles
	idx := map[string]int{}
	total := 0
	for _, g := range v.selected(f) {
		total++
		n, ok := idx[g.Device.Node]
		if !ok {
			n = len(nodes)
			idx[g.Device.Node] = n
			d := g.Device
			nodes = append(nodes, NodeTiles{Node: d.Node, Cluster: d.Cluster, InstanceType: d.InstanceType, Zone: d.Zone})
		}
		nt := &nodes[n]
		nt.Devices++
		// Tiles are built for the page only.
		_ = nt
	}
	out := DevicesPage{TotalNodes: len(nodes), TotalDevices: total, Page: page, PageSize: size, Nodes: []NodeTiles{}}
	lo := (page - 1) * size
	if lo >= len(nodes) {
		return out
	}
	hi := min(lo+size, len(nodes))
	want := map[string]bool{}
	for _, n := range nodes[lo:hi] {
		want[n.Node] = true
	}
	for _, g := range v.selected(f) {
		if !want[g.Device.Node] {
			continue
		}
		nt := &nodes[idx[g.Device.Node]]
		t := v.Tile(g)
		nt.Tiles = append(nt.Tiles, t)
		nt.CostPerHour = Round4(nt.CostPerHour + t.CostPerHour)
	}
	out.Nodes = nodes[lo:hi]
	return out
}
