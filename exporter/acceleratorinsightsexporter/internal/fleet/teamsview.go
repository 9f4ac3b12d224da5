package fleet

import (
	"cmp"
	"slices"
)

// Usage is what a team, namespace or workload holds and costs.
type Usage struct {
	DevicesHeld   float64       `json:"devices_held"`
	Utilization   *float64      `json:"utilization"`
	CostPerHour   float64       `json:"cost_per_hour"`
	CostPerMonth  float64       `json:"cost_per_month"`
	WastePerHour  float64       `json:"waste_per_hour"`
	WasteByReason []ReasonMoney `json:"waste_by_reason"`
}

type usageAcc struct {
	held, utilNum, utilDen, price float64
	waste                         map[string]float64
}

func (a *usageAcc) add(r *Resource, share float64, util *float64) {
	a.held += share
	if util != nil && share > 0 {
		a.utilNum += *util * share
		a.utilDen += share
	}
	if r.PricePerHour != nil {
		a.price += *r.PricePerHour
	}
	if a.waste == nil {
		a.waste = map[string]float64{}
	}
	for k, w := range r.WastePerHour {
		a.waste[k] += w
	}
}

func (a *usageAcc) usage() Usage {
	u := Usage{DevicesHeld: Round4(a.held), CostPerHour: Round4(a.price), CostPerMonth: Round4(a.price * HoursPerMonth),
		WastePerHour: Round4(sum(a.waste)), WasteByReason: byReason(a.waste)}
	if a.utilDen > 0 {
		u.Utilization = ptr(Round4(a.utilNum / a.utilDen))
	}
	return u
}

// TeamUsage is one team.
type TeamUsage struct {
	Team string `json:"team"`
	Usage
	Namespaces []NamespaceUsage `json:"namespaces"`
}

// NamespaceUsage is one namespace of a team.
type NamespaceUsage struct {
	Namespace string `json:"namespace"`
	Usage
	Workloads []WorkloadUsage `json:"workloads"`
}

// WorkloadUsage is one workload of a namespace.
type WorkloadUsage struct {
	Workload     string `json:"workload"`
	WorkloadType string `json:"workload_type"`
	Usage
	Pods []string `json:"pods"`
}

// TeamsList is GET /api/v1/teams.
type TeamsList struct {
	Teams []TeamUsage `json:"teams"`
}

// Teams sums held capacity by team, namespace and workload. Only held
// resources count (allocated, in use or idle); unallocated and reserved
// capacity is nobody's.
func (v *View) Teams(f Filter) TeamsList {
	type wl struct {
		acc  usageAcc
		typ  string
		pods map[string]bool
	}
	type ns struct {
		acc usageAcc
		wls map[string]*wl
	}
	type team struct {
		acc usageAcc
		nss map[string]*ns
	}
	teams := map[string]*team{}
	for _, g := range v.selected(f) {
		g.visitShares(v.Idle, func(r *Resource, share float64, cat string, util *float64) {
			// A device's own resource beside its consumers' copies holds
			// nothing itself.
			if (cat != AllocInUse && cat != AllocIdle) || r.Pod == "" {
				return
			}
			if !f.match("team", r.Team) || !f.match("namespace", r.Namespace) {
				return
			}
			t := teams[r.Team]
			if t == nil {
				t = &team{nss: map[string]*ns{}}
				teams[r.Team] = t
			}
			n := t.nss[r.Namespace]
			if n == nil {
				n = &ns{wls: map[string]*wl{}}
				t.nss[r.Namespace] = n
			}
			w := n.wls[r.Workload]
			if w == nil {
				w = &wl{typ: r.WorkType, pods: map[string]bool{}}
				n.wls[r.Workload] = w
			}
			if r.Pod != "" {
				w.pods[r.Pod] = true
			}
			t.acc.add(r, share, util)
			n.acc.add(r, share, util)
			w.acc.add(r, share, util)
		})
	}
	out := TeamsList{Teams: []TeamUsage{}}
	for name, t := range teams {
		tu := TeamUsage{Team: name, Usage: t.acc.usage(), Namespaces: []NamespaceUsage{}}
		for nsName, n := range t.nss {
			nu := NamespaceUsage{Namespace: nsName, Usage: n.acc.usage(), Workloads: []WorkloadUsage{}}
			for wlName, w := range n.wls {
				pods := make([]string, 0, len(w.pods))
				for p := range w.pods {
					pods = append(pods, p)
				}
				slices.Sort(pods)
				nu.Workloads = append(nu.Workloads, WorkloadUsage{Workload: wlName, WorkloadType: w.typ, Usage: w.acc.usage(), Pods: pods})
			}
			slices.SortFunc(nu.Workloads, func(a, b WorkloadUsage) int {
				return cmp.Or(cmp.Compare(b.CostPerHour, a.CostPerHour), cmp.Compare(a.Workload, b.Workload))
			})
			tu.Namespaces = append(tu.Namespaces, nu)
		}
		slices.SortFunc(tu.Namespaces, func(a, b NamespaceUsage) int {
			return cmp.Or(cmp.Compare(b.CostPerHour, a.CostPerHour), cmp.Compare(a.Namespace, b.Namespace))
		})
		out.Teams = append(out.Teams, tu)
	}
	slices.SortFunc(out.Teams, func(a, b TeamUsage) int {
		return cmp.Or(cmp.Compare(b.CostPerHour, a.CostPerHour), cmp.Compare(a.Team, b.Team))
	})
	return out
}
