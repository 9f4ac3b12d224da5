package fleet

import (
	"cmp"
	"slices"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// CapacityRow is capacity of one model, instance type or zone.
type CapacityRow struct {
	Key                 string  `json:"key"`
	Devices             int     `json:"devices"`
	Allocated           float64 `json:"allocated"`
	InUse               float64 `json:"in_use"`
	Unallocated         float64 `json:"unallocated"`
	UnallocatedPerHour  float64 `json:"unallocated_per_hour"`
	UnallocatedPerMonth float64 `json:"unallocated_per_month"`
	CostPerHour         float64 `json:"cost_per_hour"`
}

// MIGCapacity is MIG capacity no profile can use.
type MIGCapacity struct {
	Devices               int     `json:"devices"`
	Instances             int     `json:"instances"`
	FragmentationPerHour  float64 `json:"fragmentation_per_hour"`
	FragmentationPerMonth float64 `json:"fragmentation_per_month"`
}

// CapacityView is GET /api/v1/capacity.
type CapacityView struct {
	ByModel        []CapacityRow `json:"by_model"`
	ByInstanceType []CapacityRow `json:"by_instance_type"`
	ByZone         []CapacityRow `json:"by_zone"`
	MIG            MIGCapacity   `json:"mig"`
}

// Capacity sums devices and their allocation by model, instance type and
// zone. Unallocated dollars are the price of the unallocated shares.
func (v *View) Capacity(f Filter) CapacityView {
	rows := [3]map[string]*CapacityRow{{}, {}, {}}
	var out CapacityView
	var frag float64
	for _, g := range v.selected(f) {
		a := g.allocation(v.Idle)
		price, waste := g.money()
		var unallocPrice float64
		g.visitShares(v.Idle, func(r *Resource, _ float64, cat string, _ *float64) {
			if cat == AllocUnallocated && r.PricePerHour != nil {
				unallocPrice += *r.PricePerHour
			}
		})
		d := g.Device
		for i, key := range []string{d.Model, d.InstanceType, d.Zone} {
			row := rows[i][key]
			if row == nil {
				row = &CapacityRow{Key: key}
				rows[i][key] = row
			}
			row.Devices++
			row.Allocated += a.allocated()
			row.InUse += a.InUse
			row.Unallocated += a.Unallocated
			row.UnallocatedPerHour += unallocPrice
			row.CostPerHour += price
		}
		migs := 0
		for _, p := range g.Partitions {
			if p.PartitionType == s.PartitionMIG {
				migs++
			}
		}
		if migs > 0 {
			out.MIG.Devices++
			out.MIG.Instances += migs
		}
		frag += waste[s.WasteFragmentation]
	}
	list := func(m map[string]*CapacityRow) []CapacityRow {
		l := []CapacityRow{}
		for _, r := range m {
			r.Allocated, r.InUse, r.Unallocated = Round4(r.Allocated), Round4(r.InUse), Round4(r.Unallocated)
			r.UnallocatedPerMonth = Round4(r.UnallocatedPerHour * HoursPerMonth)
			r.UnallocatedPerHour, r.CostPerHour = Round4(r.UnallocatedPerHour), Round4(r.CostPerHour)
			l = append(l, *r)
		}
		slices.SortFunc(l, func(a, b CapacityRow) int { return cmp.Compare(a.Key, b.Key) })
		return l
	}
	out.ByModel, out.ByInstanceType, out.ByZone = list(rows[0]), list(rows[1]), list(rows[2])
	out.MIG.FragmentationPerHour, out.MIG.FragmentationPerMonth = Round4(frag), Round4(frag*HoursPerMonth)
	return out
}
