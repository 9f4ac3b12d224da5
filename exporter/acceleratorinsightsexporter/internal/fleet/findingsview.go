package fleet

import (
	"cmp"
	"slices"
)

// FindingsList is GET /api/v1/findings.
type FindingsList struct {
	Total         int       `json:"total"`
	MonthlySaving float64   `json:"monthly_saving"`
	Findings      []Finding `json:"findings"`
}

// Findings lists findings in the given states (none: open and
// acknowledged) and kind, most saving first.
func (v *View) Findings(f Filter, states []string, kind string) FindingsList {
	if len(states) == 0 {
		states = []string{StateOpen, StateAcknowledged}
	}
	out := FindingsList{Findings: []Finding{}}
	for i := range v.Logs.Findings {
		x := &v.Logs.Findings[i]
		if !slices.Contains(states, x.State) || (kind != "" && x.Kind != kind) || !f.matchesIdentity(&x.Identity) {
			continue
		}
		out.Findings = append(out.Findings, *x)
		out.MonthlySaving += x.MonthlySaving
	}
	out.Total = len(out.Findings)
	out.MonthlySaving = Round4(out.MonthlySaving)
	sortFindings(out.Findings)
	return out
}

func sortFindings(fs []Finding) {
	slices.SortFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.MonthlySaving, a.MonthlySaving), cmp.Compare(a.ID, b.ID))
	})
}

func (v *View) findingCounts(f Filter) FindingCounts {
	var c FindingCounts
	for i := range v.Logs.Findings {
		x := &v.Logs.Findings[i]
		if !f.matchesIdentity(&x.Identity) {
			continue
		}
		switch x.State {
		case StateOpen:
			c.Open++
			c.MonthlySaving += x.MonthlySaving
		case StateAcknowledged:
			c.Acknowledged++
			c.MonthlySaving += x.MonthlySaving
		case StateDismissed:
			c.Dismissed++
		}
	}
	c.MonthlySaving = Round4(c.MonthlySaving)
	return c
}

// findingsOn lists the not dismissed findings raised on a device (or its
// partitions and copies) or, with pod set, held by a pod.
func (v *View) findingsOn(node, hwID, ns, pod string) []Finding {
	out := []Finding{}
	for i := range v.Logs.Findings {
		x := &v.Logs.Findings[i]
		if x.State == StateDismissed {
			continue
		}
		if pod != "" {
			if x.Namespace != ns || x.Pod != pod {
				continue
			}
		} else if x.Node != node || (x.HWID != hwID && x.Parent != hwID) {
			continue
		}
		out = append(out, *x)
	}
	sortFindings(out)
	return out
}

func (v *View) openFindingsOn(node, hwID, _ string) int {
	n := 0
	for i := range v.Logs.Findings {
		x := &v.Logs.Findings[i]
		if x.State == StateOpen && x.Node == node && (x.HWID == hwID || x.Parent == hwID) {
			n++
		}
	}
	return n
}
