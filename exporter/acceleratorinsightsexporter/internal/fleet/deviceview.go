package fleet

import (
	"cmp"
	"slices"
	"time"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// DeviceIdentity is the device page's identity card.
type DeviceIdentity struct {
	ID                string        `json:"id"`
	Node              string        `json:"node"`
	Cluster           string        `json:"cluster"`
	Host              string        `json:"host"`
	Kind              string        `json:"kind"`
	Family            string        `json:"family"`
	Vendor            string        `json:"vendor"`
	Model             string        `json:"model"`
	Index             *int          `json:"index"`
	InstanceType      string        `json:"instance_type"`
	Zone              string        `json:"zone"`
	Region            string        `json:"region"`
	PartitionType     string        `json:"partition_type"`
	PartitionID       *string       `json:"partition_id"`
	Profile           *string       `json:"profile"`
	Share             *float64      `json:"share"`
	Parent            *string       `json:"parent"`
	Health            string        `json:"health"`
	FailureMode       *string       `json:"failure_mode"`
	Action            *string       `json:"action"`
	ActionDescription *string       `json:"action_description"`
	Allocation        string        `json:"allocation"`
	AllocatedShare    float64       `json:"allocated_share"`
	Utilization       *float64      `json:"utilization"`
	CostPerHour       float64       `json:"cost_per_hour"`
	CostPerMonth      float64       `json:"cost_per_month"`
	WastePerHour      float64       `json:"waste_per_hour"`
	WasteByReason     []ReasonMoney `json:"waste_by_reason"`
}

// DeviceSeries is the device page's charts.
type DeviceSeries struct {
	WindowSeconds float64  `json:"window_seconds"`
	Metrics       []Series `json:"metrics"`
}

// DeviceDetail is GET /api/v1/device.
type DeviceDetail struct {
	Device         DeviceIdentity `json:"device"`
	Holders        []Holder       `json:"holders"`
	Partitions     []Tile         `json:"partitions"`
	Series         DeviceSeries   `json:"series"`
	HealthTimeline []Event        `json:"health_timeline"`
	Findings       []Finding      `json:"findings"`
}

// SeriesRef names a resource whose charts the backend reads.
type SeriesRef struct {
	Node, HWID, PartitionType, PartitionID, Holder string
	// CoresOnly: only utilization (NeuronCores, MIG instances under a
	// device page).
	PartitionsUtilizationOnly bool
}

// ActionBrief is the enum's description of an action.
func ActionBrief(action string) *string {
	for _, v := range s.EnumAction.Values {
		if v.Value == action {
			return ptr(v.Brief)
		}
	}
	return nil
}

// Device finds a device or partition by hw.id (and node, when given) and
// describes it; the refs say whose series to read. ok is false when no
// device or partition has that id.
func (v *View) Device(id, node string) (DeviceDetail, []SeriesRef, bool) {
	for _, g := range v.Groups {
		if node != "" && g.Device.Node != node {
			continue
		}
		if g.Device.HWID == id {
			return v.deviceDetail(g, nil), v.refs(g, nil), true
		}
		for _, p := range g.Partitions {
			if p.HWID == id {
				return v.deviceDetail(g, p), v.refs(g, p), true
			}
		}
	}
	return DeviceDetail{}, nil, false
}

func (v *View) refs(g *Group, p *Part) []SeriesRef {
	ref := func(r *Resource, utilOnly bool) SeriesRef {
		return SeriesRef{r.Node, r.HWID, r.PartitionType, r.PartitionID, r.HolderKey(), utilOnly}
	}
	if p != nil {
		return []SeriesRef{ref(p.Resource, false)}
	}
	out := []SeriesRef{}
	if !g.Synthetic {
		out = append(out, ref(g.Device, false))
	}
	for _, q := range g.Partitions {
		out = append(out, ref(q.Resource, true))
	}
	return out
}

func (v *View) deviceDetail(g *Group, p *Part) DeviceDetail {
	health, ev := v.deviceHealth(g)
	var tile Tile
	r := g.Device
	kind := "device"
	if p != nil {
		r, kind = p.Resource, "partition"
		tile = v.tileOf(g, p.Resource, p.Copies, "partition", health)
	} else {
		tile = v.Tile(g)
	}
	_, waste := g.money()
	if p != nil {
		waste = map[string]float64{}
		add := func(x *Resource) {
			for k, w := range x.WastePerHour {
				waste[k] += w
			}
		}
		add(p.Resource)
		for _, c := range p.Copies {
			add(c)
		}
	}
	d := DeviceIdentity{ID: r.HWID, Node: r.Node, Cluster: r.Cluster, Host: r.Host, Kind: kind, Family: r.Kind,
		Vendor: r.Vendor, Model: r.Model, InstanceType: r.InstanceType, Zone: r.Zone, Region: r.Region,
		PartitionType: tile.PartitionType, PartitionID: nonEmpty(r.PartitionID), Profile: nonEmpty(r.Profile),
		Parent: nonEmpty(r.Parent), Health: health, Allocation: tile.Allocation, AllocatedShare: tile.AllocatedShare,
		Utilization: tile.Utilization, CostPerHour: tile.CostPerHour, CostPerMonth: Round4(tile.CostPerHour * HoursPerMonth),
		WastePerHour: tile.WastePerHour, WasteByReason: byReason(waste)}
	d.Index = tile.Index
	if g.real(r) {
		d.Share = ptr(Round4(g.share(r)))
	}
	if health != s.HWStateOK {
		why := failureOf(g.Device, ev)
		d.FailureMode, d.Action, d.ActionDescription = why.mode, why.action, why.brief
	}
	out := DeviceDetail{Device: d, Holders: tile.Holders, Partitions: tile.Partitions,
		Series: DeviceSeries{Metrics: []Series{}}, HealthTimeline: []Event{}}
	if p != nil {
		out.Partitions = []Tile{}
	}
	for _, e := range v.events[g.Device.HWID] {
		if e.Node == g.Device.Node {
			out.HealthTimeline = append(out.HealthTimeline, *e)
		}
	}
	out.Findings = v.findingsOn(g.Device.Node, r.HWID, "", "")
	return out
}

// PodDevice is one device or partition a pod holds.
type PodDevice struct {
	ID            string   `json:"id"`
	Node          string   `json:"node"`
	Model         string   `json:"model"`
	PartitionType string   `json:"partition_type"`
	Share         float64  `json:"share"`
	Utilization   *float64 `json:"utilization"`
	Health        string   `json:"health"`
}

// PodDetail is GET /api/v1/pod.
type PodDetail struct {
	Namespace    string      `json:"namespace"`
	Pod          string      `json:"pod"`
	Node         string      `json:"node"`
	Team         string      `json:"team"`
	Workload     string      `json:"workload"`
	WorkloadType string      `json:"workload_type"`
	Devices      []PodDevice `json:"devices"`
	CostPerHour  float64     `json:"cost_per_hour"`
	WastePerHour float64     `json:"waste_per_hour"`
	Findings     []Finding   `json:"findings"`
	Inference    []Endpoint  `json:"inference"`
}

// Pod describes what one pod holds; ok is false when nothing names it.
func (v *View) Pod(ns, name string) (PodDetail, bool) {
	out := PodDetail{Namespace: ns, Pod: name, Devices: []PodDevice{}}
	found := false
	var price, waste float64
	for _, g := range v.Groups {
		health, _ := v.deviceHealth(g)
		g.visitShares(v.Idle, func(r *Resource, share float64, _ string, util *float64) {
			if r.Namespace != ns || r.Pod != name {
				return
			}
			found = true
			out.Node, out.Team, out.Workload, out.WorkloadType = r.Node, r.Team, r.Workload, r.WorkType
			out.Devices = append(out.Devices, PodDevice{ID: r.HWID, Node: r.Node, Model: r.Model,
				PartitionType: cmp.Or(r.PartitionType, s.PartitionNone), Share: Round4(share), Utilization: Round4Ptr(util), Health: health})
			if r.PricePerHour != nil {
				price += *r.PricePerHour
			}
			waste += sum(r.WastePerHour)
		})
	}
	out.Inference = []Endpoint{}
	for _, e := range v.Inference(Filter{}).Endpoints {
		if e.Namespace == ns && e.Pod == name {
			found = true
			out.Inference = append(out.Inference, e)
			if out.Node == "" {
				out.Node, out.Team, out.Workload = e.Node, e.Team, e.Workload
			}
		}
	}
	out.CostPerHour, out.WastePerHour = Round4(price), Round4(waste)
	out.Findings = v.findingsOn("", "", ns, name)
	slices.SortFunc(out.Devices, func(a, b PodDevice) int { return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.ID, b.ID)) })
	return out, found
}

// EventsList is GET /api/v1/events.
type EventsList struct {
	Events []Event `json:"events"`
}

// Events lists health events newer than since, for one device when given,
// newest first, at most limit.
func (v *View) Events(f Filter, device string, since time.Time, limit int) EventsList {
	out := EventsList{Events: []Event{}}
	place := v.placeIndex()
	for i := range v.Logs.Events {
		e := &v.Logs.Events[i]
		if e.Time.Before(since) || (device != "" && e.DeviceID != device) || !v.eventMatches(f, e, place) {
			continue
		}
		out.Events = append(out.Events, *e)
		if len(out.Events) == limit {
			break
		}
	}
	return out
}

// placeIndex maps node/device to the device's group, so that events (which
// carry little identity) can be filtered like devices.
func (v *View) placeIndex() map[groupKey]*Group {
	m := make(map[groupKey]*Group, len(v.Groups))
	for _, g := range v.Groups {
		m[groupKey{g.Device.Node, g.Device.HWID}] = g
	}
	return m
}

func (v *View) eventMatches(f Filter, e *Event, place map[groupKey]*Group) bool {
	if len(f) == 0 {
		return true
	}
	if g, ok := place[groupKey{e.Node, e.DeviceID}]; ok {
		return f.Matches(g)
	}
	return f.match("node", e.Node) && f.match("cluster", e.Cluster) && len(f) <= 2
}
