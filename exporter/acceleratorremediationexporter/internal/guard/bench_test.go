package guard

import (
	"fmt"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// plans returns n plans on n nodes of one instance type, every fourth
// holding its node (acquired, with its disruptive steps started), a third
// of those finished and cooling down.
func benchPlans(b *testing.B, n int, now time.Time) []*plan.Plan {
	b.Helper()
	rp, ok := xid.PlanFor(xid.Lookup(79))
	if !ok {
		b.Fatal("no plan for XID 79")
	}
	out := make([]*plan.Plan, 0, n)
	for i := range n {
		p := plan.New(rp, plan.Subject{Node: fmt.Sprintf("n%d", i), InstanceType: "p5.48xlarge"}, plan.Evidence{XID: 79}, now.Add(-time.Duration(n-i)*time.Second))
		if i%4 == 0 {
			p.Acquired = true
			for j := range p.Steps {
				p.Steps[j].State, p.Steps[j].Started = plan.StepSucceeded, now.Add(-10*time.Minute)
			}
			if i%12 == 0 {
				p.Set(plan.Succeeded, "", now.Add(-5*time.Minute))
			}
		}
		out = append(out, p)
	}
	return out
}

// BenchmarkGuard is what the engine pays per plan and tick before a
// disruptive step: Admit (may the plan take its node?) and Act (the hourly
// budget and the maintenance windows), over every plan kept.
func BenchmarkGuard(b *testing.B) {
	now := time.Date(2026, 12, 2, 12, 30, 0, 0, time.UTC)
	c := Config{MaxNodes: 1 << 30, MaxPercentPerInstanceType: 100, NodeCooldown: time.Hour, ActionsPerHour: 1 << 30,
		MaintenanceWindows: []Window{{Days: []string{"wed"}, Start: "12:00", Duration: time.Hour}}}
	fleet := func(string) int { return 100_000 }
	for _, n := range []int{10, 1000, 10_000} {
		all := benchPlans(b, n, now)
		waiting := all[len(all)-1] // not acquired: Admit walks every plan
		b.Run(fmt.Sprintf("admit/plans=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if why := c.Admit(waiting, all, fleet, now); why != "" {
					b.Fatal(why)
				}
			}
		})
		b.Run(fmt.Sprintf("act/plans=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if why := c.Act(all, now); why != "" {
					b.Fatal(why)
				}
			}
		})
	}
}
