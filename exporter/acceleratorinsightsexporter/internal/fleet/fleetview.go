package fleet

import (
	"cmp"
	"slices"
	"time"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// FleetSummary is GET /api/v1/fleet.
type FleetSummary struct {
	GeneratedAt time.Time `json:"generated_at"`
	Devices     struct {
		Total      int             `json:"total"`
		Partitions int             `json:"partitions"`
		ByFamily   []FamilyDevices `json:"by_family"`
	} `json:"devices"`
	Health     map[string]int `json:"health"`
	Allocation Allocation     `json:"allocation"`
	Cost       Money          `json:"cost"`
	Waste      struct {
		PerHour  float64       `json:"per_hour"`
		PerMonth float64       `json:"per_month"`
		ByReason []ReasonMoney `json:"by_reason"`
	} `json:"waste"`
	Findings FindingCounts `json:"findings"`
}

// FamilyDevices counts one family's devices by model.
type FamilyDevices struct {
	Family  string         `json:"family"`
	Devices int            `json:"devices"`
	Models  []ModelDevices `json:"models"`
}

// ModelDevices counts one model's devices.
type ModelDevices struct {
	Model   string `json:"model"`
	Devices int    `json:"devices"`
}

// FindingCounts counts findings by state.
type FindingCounts struct {
	Open          int     `json:"open"`
	Acknowledged  int     `json:"acknowledged"`
	Dismissed     int     `json:"dismissed"`
	MonthlySaving float64 `json:"monthly_saving"`
}

// Fleet computes the fleet summary.
func (v *View) Fleet(f Filter) FleetSummary {
	var out FleetSummary
	out.GeneratedAt = v.Snap.At.UTC()
	out.Health = map[string]int{s.HWStateOK: 0, s.HWStateDegraded: 0, s.HWStateFailed: 0, s.HWStatePredictedFailure: 0, "unknown": 0}
	fam := map[string]map[string]int{}
	var price float64
	waste := map[string]float64{}
	for _, g := range v.selected(f) {
		out.Devices.Total++
		out.Devices.Partitions += len(g.Partitions)
		if fam[g.Device.Kind] == nil {
			fam[g.Device.Kind] = map[string]int{}
		}
		fam[g.Device.Kind][g.Device.Model]++
		h, _ := v.deviceHealth(g)
		out.Health[h]++
		a := g.allocation(v.Idle)
		out.Allocation.InUse += a.InUse
		out.Allocation.Idle += a.Idle
		out.Allocation.Unallocated += a.Unallocated
		out.Allocation.Reserved += a.Reserved
		price += g.addMoney(waste)
	}
	out.Allocation = Allocation{Round4(out.Allocation.InUse), Round4(out.Allocation.Idle), Round4(out.Allocation.Unallocated), Round4(out.Allocation.Reserved)}
	out.Devices.ByFamily = []FamilyDevices{}
	for family, models := range fam {
		fd := FamilyDevices{Family: family}
		for m, n := range models {
			fd.Devices += n
			fd.Models = append(fd.Models, ModelDevices{m, n})
		}
		slices.SortFunc(fd.Models, func(a, b ModelDevices) int { return cmp.Compare(a.Model, b.Model) })
		out.Devices.ByFamily = append(out.Devices.ByFamily, fd)
	}
	slices.SortFunc(out.Devices.ByFamily, func(a, b FamilyDevices) int { return cmp.Compare(a.Family, b.Family) })
	out.Cost = money(price)
	w := sum(waste)
	out.Waste.PerHour, out.Waste.PerMonth = Round4(w), Round4(w*HoursPerMonth)
	out.Waste.ByReason = byReason(waste)
	out.Findings = v.findingCounts(f)
	return out
}

// Filters is GET /api/v1/filters: every value seen, sorted.
func (v *View) Filters() map[string][]string {
	seen := map[string]map[string]bool{}
	for _, k := range FilterKeys {
		seen[k] = map[string]bool{}
	}
	add := func(k, val string) {
		if val != "" {
			seen[k][val] = true
		}
	}
	for _, g := range v.Groups {
		d := g.Device
		add("cluster", d.Cluster)
		add("node", d.Node)
		add("instance_type", d.InstanceType)
		add("zone", d.Zone)
		add("family", d.Kind)
		add("model", d.Model)
		g.each(func(r *Resource) {
			add("team", r.Team)
			add("namespace", r.Namespace)
			add("partition_type", r.PartitionType)
		})
		if g.Synthetic {
			add("partition_type", s.PartitionNone)
		}
	}
	out := map[string][]string{}
	for k, m := range seen {
		vals := make([]string, 0, len(m))
		for val := range m {
			vals = append(vals, val)
		}
		slices.Sort(vals)
		out[k] = vals
	}
	return out
}
