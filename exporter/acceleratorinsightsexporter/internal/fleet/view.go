package fleet

import (
	"cmp"
	"slices"
	"time"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// View answers the API from one snapshot and the logs side.
type View struct {
	Snap   *Snapshot
	Logs   *Logs
	Groups []*Group
	// Idle is the utilization below which allocated capacity is idle.
	Idle float64
	// health events by device id, newest first
	events map[string][]*Event
}

// NewView groups the snapshot's resources and indexes the events.
func NewView(snap *Snapshot, logs *Logs, idle float64) *View {
	if logs == nil {
		logs = &Logs{}
	}
	return withLogs(&View{Snap: snap, Groups: Groups(snap), Idle: idle}, logs)
}

// WithLogs is the view of the same snapshot with other logs (a finding
// acknowledged): the grouping, which depends on the metrics alone and is
// most of a view's cost, is shared, so a write is answered without
// rebuilding the fleet. Views are never changed once made, so sharing is
// safe.
func (v *View) WithLogs(logs *Logs) *View {
	if logs == nil {
		logs = &Logs{}
	}
	return withLogs(&View{Snap: v.Snap, Groups: v.Groups, Idle: v.Idle}, logs)
}

func withLogs(v *View, logs *Logs) *View {
	v.Logs, v.events = logs, make(map[string][]*Event, len(logs.Events))
	for i := range logs.Events {
		e := &logs.Events[i]
		v.events[e.DeviceID] = append(v.events[e.DeviceID], e)
	}
	return v
}

// Money is a rate with its monthly equivalent.
type Money struct {
	PerHour  float64 `json:"per_hour"`
	PerMonth float64 `json:"per_month"`
}

func money(perHour float64) Money { return Money{Round4(perHour), Round4(perHour * HoursPerMonth)} }

// ReasonMoney is waste of one reason.
type ReasonMoney struct {
	Reason   string  `json:"reason"`
	PerHour  float64 `json:"per_hour"`
	PerMonth float64 `json:"per_month"`
}

func byReason(m map[string]float64) []ReasonMoney {
	out := []ReasonMoney{}
	for k, v := range m {
		if v == 0 {
			continue
		}
		out = append(out, ReasonMoney{k, Round4(v), Round4(v * HoursPerMonth)})
	}
	slices.SortFunc(out, func(a, b ReasonMoney) int {
		return cmp.Or(cmp.Compare(b.PerHour, a.PerHour), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

func sum(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}

// selected is the groups a filter keeps.
func (v *View) selected(f Filter) []*Group {
	var out []*Group
	for _, g := range v.Groups {
		if f.Matches(g) {
			out = append(out, g)
		}
	}
	return out
}

// deviceHealth is hw.status's state, else the newest health event's, else
// unknown; with the newest event that explains it.
func (v *View) deviceHealth(g *Group) (string, *Event) {
	evs := v.events[g.Device.HWID]
	var last *Event
	for _, e := range evs {
		if e.State != nil && e.Node == g.Device.Node {
			last = e
			break
		}
	}
	h := g.Device.Health
	if h == "" && last != nil {
		h = *last.State
	}
	if h == "" {
		h = "unknown"
	}
	if h == s.HWStateOK {
		return h, nil
	}
	return h, last
}

// Round4 rounds x to four decimals, half away from zero, for the API's
// JSON (stable golden files, no 0.30000000000000004). Values too large
// for four decimals to matter are returned as they are.
func Round4(x float64) float64 {
	const k = 1e4
	if x > 1e14 || x < -1e14 {
		return x
	}
	if x < 0 {
		return -float64(int64(-x*k+0.5)) / k
	}
	return float64(int64(x*k+0.5)) / k
}

func ptr[T any](v T) *T { return &v }

func nonEmpty(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// Round4Ptr is Round4 of an optional value: nil stays nil.
func Round4Ptr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	return ptr(Round4(*p))
}

// Now is the snapshot's time.
func (v *View) Now() time.Time { return v.Snap.At }
