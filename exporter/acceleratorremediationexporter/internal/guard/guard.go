// Package guard holds the guard rails every plan passes before it disturbs
// anything, in every mode: how many nodes (and what share of each instance
// type) may be under remediation at once, a cooldown per node, a budget of
// actions per hour and maintenance windows. A burst of failures must not
// drain a fleet: the plans beyond the limits wait, in order.
//
// The rails read only the plans themselves (which node each holds, when its
// steps ran, when it finished), so they survive a restart with the plans and
// have one source of truth.
package guard // import "github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/guard"

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

// Config is the guard rails' configuration.
type Config struct {
	// MaxNodes is how many nodes may be under remediation at once. A node
	// counts from its plan's first disruptive step until the plan finished
	// and its cooldown ran out.
	MaxNodes int `mapstructure:"max_nodes"`
	// MaxPercentPerInstanceType caps the nodes of one instance type under
	// remediation at once, as a percentage of that type's nodes (at least
	// one node of a type may always be remediated, or a small pool could
	// never be).
	MaxPercentPerInstanceType float64 `mapstructure:"max_percent_per_instance_type"`
	// NodeCooldown is how long after a plan finished on a node before
	// another may disturb it.
	NodeCooldown time.Duration `mapstructure:"node_cooldown"`
	// ActionsPerHour bounds the disruptive steps (all plans together) in
	// any hour.
	ActionsPerHour int `mapstructure:"actions_per_hour"`
	// MaintenanceWindows, when set, are the only times disruptive steps
	// run.
	MaintenanceWindows []Window `mapstructure:"maintenance_windows"`
}

// Window is a recurring maintenance window in UTC.
type Window struct {
	// Days are the weekdays it opens on (mon … sun); empty means every day.
	Days []string `mapstructure:"days"`
	// Start is the opening time, HH:MM UTC.
	Start string `mapstructure:"start"`
	// Duration is how long it stays open.
	Duration time.Duration `mapstructure:"duration"`
}

var weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// Check checks the shape of the guard rails. It is not named Validate:
// the collector would call that on the embedded struct too and report each
// error twice.
func (c Config) Check() error {
	var errs []error
	if c.MaxNodes < 1 {
		errs = append(errs, fmt.Errorf("guard_rails.max_nodes must be at least 1, got %d", c.MaxNodes))
	}
	if c.MaxPercentPerInstanceType <= 0 || c.MaxPercentPerInstanceType > 100 {
		errs = append(errs, fmt.Errorf("guard_rails.max_percent_per_instance_type must be in (0, 100], got %v", c.MaxPercentPerInstanceType))
	}
	if c.NodeCooldown < 0 {
		errs = append(errs, errors.New("guard_rails.node_cooldown must not be negative"))
	}
	if c.ActionsPerHour < 1 {
		errs = append(errs, fmt.Errorf("guard_rails.actions_per_hour must be at least 1, got %d", c.ActionsPerHour))
	}
	for i, w := range c.MaintenanceWindows {
		if _, err := time.Parse("15:04", w.Start); err != nil {
			errs = append(errs, fmt.Errorf("guard_rails.maintenance_windows[%d].start %q is not HH:MM (UTC)", i, w.Start))
		}
		if w.Duration <= 0 || w.Duration > 7*24*time.Hour {
			errs = append(errs, fmt.Errorf("guard_rails.maintenance_windows[%d].duration must be in (0, 168h]", i))
		}
		for _, d := range w.Days {
			if _, ok := weekdays[strings.ToLower(d)]; !ok {
				errs = append(errs, fmt.Errorf("guard_rails.maintenance_windows[%d].days: %q is not one of mon, tue, wed, thu, fri, sat, sun", i, d))
			}
		}
	}
	return errors.Join(errs...)
}

// Fleet says how many nodes of an instance type the cluster has (0 when
// it does not know).
type Fleet func(instanceType string) int

// Admit decides whether p may take its node for its first disruptive step,
// given every other plan. It returns "" when it may, else the rail that
// holds it back.
func (c Config) Admit(p *plan.Plan, all []*plan.Plan, fleet Fleet, now time.Time) string {
	node := p.NodeKey()
	held := map[string]bool{}
	heldOfType := map[string]bool{}
	for _, o := range all {
		if o.ID == p.ID || !o.Acquired {
			continue
		}
		if o.State.Terminal() {
			cooling := c.NodeCooldown > 0 && now.Sub(o.Finished) < c.NodeCooldown
			if !cooling {
				continue
			}
			if o.NodeKey() == node {
				return fmt.Sprintf("node_cooldown: plan %s finished on %s at %s; cooldown %s", o.ID, node, o.Finished.UTC().Format(time.RFC3339), c.NodeCooldown)
			}
			// A node whose plan finished is still out of service (cordoned,
			// drained, rebooting) while its cooldown runs: it still counts,
			// or plans that finish at once would let a burst through.
		}
		held[o.NodeKey()] = true
		if p.Subject.InstanceType != "" && o.Subject.InstanceType == p.Subject.InstanceType {
			heldOfType[o.NodeKey()] = true
		}
	}
	if held[node] {
		return "" // another plan already holds this node: no new node taken
	}
	if len(held) >= c.MaxNodes {
		return fmt.Sprintf("max_nodes: %d nodes under remediation (limit %d)", len(held), c.MaxNodes)
	}
	if p.Subject.InstanceType != "" && fleet != nil {
		if total := fleet(p.Subject.InstanceType); total > 0 {
			allowed := max(1, int(math.Floor(float64(total)*c.MaxPercentPerInstanceType/100)))
			if len(heldOfType) >= allowed {
				return fmt.Sprintf("max_percent_per_instance_type: %d of %d %s nodes under remediation (limit %v%% = %d)",
					len(heldOfType), total, p.Subject.InstanceType, c.MaxPercentPerInstanceType, allowed)
			}
		}
	}
	return ""
}

// Act decides whether one more disruptive step may run now: the hourly
// budget and the maintenance windows. It returns "" when it may.
func (c Config) Act(all []*plan.Plan, now time.Time) string {
	if len(c.MaintenanceWindows) > 0 && !c.inWindow(now) {
		return "maintenance_windows: outside every maintenance window"
	}
	n := 0
	for _, p := range all {
		for _, s := range p.Steps {
			if s.Kind.Disruptive() && !s.DryRun && !s.Started.IsZero() && now.Sub(s.Started) < time.Hour {
				n++
			}
		}
	}
	if n >= c.ActionsPerHour {
		return fmt.Sprintf("actions_per_hour: %d disruptive steps in the last hour (limit %d)", n, c.ActionsPerHour)
	}
	return ""
}

func (c Config) inWindow(now time.Time) bool {
	now = now.UTC()
	for _, w := range c.MaintenanceWindows {
		start, err := time.Parse("15:04", w.Start)
		if err != nil {
			continue
		}
		// A window may have opened on any of the last 7 days and still be
		// open (durations up to a week).
		for back := 0; back <= 7; back++ {
			day := now.AddDate(0, 0, -back)
			open := time.Date(day.Year(), day.Month(), day.Day(), start.Hour(), start.Minute(), 0, 0, time.UTC)
			if !w.opensOn(open.Weekday()) {
				continue
			}
			if !now.Before(open) && now.Before(open.Add(w.Duration)) {
				return true
			}
		}
	}
	return false
}

func (w Window) opensOn(d time.Weekday) bool {
	if len(w.Days) == 0 {
		return true
	}
	for _, s := range w.Days {
		if weekdays[strings.ToLower(s)] == d {
			return true
		}
	}
	return false
}
