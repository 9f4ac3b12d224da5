package fleet

import (
	"cmp"
	"slices"
	"time"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Bucket counts events in one interval by failure mode.
type Bucket struct {
	Start  time.Time      `json:"start"`
	Counts map[string]int `json:"counts"`
}

// NotOK is a device whose health is not ok.
type NotOK struct {
	ID                string     `json:"id"`
	Node              string     `json:"node"`
	Model             string     `json:"model"`
	Health            string     `json:"health"`
	FailureMode       *string    `json:"failure_mode"`
	Action            *string    `json:"action"`
	ActionDescription *string    `json:"action_description"`
	Since             *time.Time `json:"since"`
}

// MPSState is one node's MPS daemon.
type MPSState struct {
	Node                   string   `json:"node"`
	Up                     *bool    `json:"up"`
	Servers                *float64 `json:"servers"`
	ActiveThreadPercentage *float64 `json:"active_thread_percentage"`
}

// XIDHistory is one device's XID events.
type XIDHistory struct {
	DeviceID string  `json:"device_id"`
	Node     string  `json:"node"`
	Events   []Event `json:"events"`
}

// ReliabilityView is GET /api/v1/reliability.
type ReliabilityView struct {
	WindowSeconds  float64      `json:"window_seconds"`
	BucketSeconds  float64      `json:"bucket_seconds"`
	EventsOverTime []Bucket     `json:"events_over_time"`
	DevicesNotOK   []NotOK      `json:"devices_not_ok"`
	MPS            []MPSState   `json:"mps"`
	XIDHistory     []XIDHistory `json:"xid_history"`
}

// Reliability summarises health over a window ending at the snapshot.
func (v *View) Reliability(f Filter, window time.Duration) ReliabilityView {
	bucket := max(window/12, time.Minute).Truncate(time.Minute)
	end := v.Snap.At.Truncate(bucket).Add(bucket)
	start := end.Add(-((window + bucket - 1) / bucket) * bucket)
	out := ReliabilityView{WindowSeconds: window.Seconds(), BucketSeconds: bucket.Seconds(),
		EventsOverTime: []Bucket{}, DevicesNotOK: []NotOK{}, MPS: []MPSState{}, XIDHistory: []XIDHistory{}}
	for t := start; t.Before(end); t = t.Add(bucket) {
		out.EventsOverTime = append(out.EventsOverTime, Bucket{Start: t.UTC(), Counts: map[string]int{}})
	}
	place := v.placeIndex()
	xids := map[groupKey]*XIDHistory{}
	var xidOrder []*XIDHistory
	for i := range v.Logs.Events {
		e := &v.Logs.Events[i]
		if e.Time.Before(start) || !v.eventMatches(f, e, place) {
			continue
		}
		if n := int(e.Time.Sub(start) / bucket); n >= 0 && n < len(out.EventsOverTime) {
			mode := s.FailureModeNone
			if e.FailureMode != nil {
				mode = *e.FailureMode
			}
			out.EventsOverTime[n].Counts[mode]++
		}
		if e.XID != nil {
			k := groupKey{e.Node, e.DeviceID}
			h := xids[k]
			if h == nil {
				h = &XIDHistory{DeviceID: e.DeviceID, Node: e.Node}
				xids[k] = h
				xidOrder = append(xidOrder, h)
			}
			h.Events = append(h.Events, *e)
		}
	}
	for _, h := range xidOrder {
		out.XIDHistory = append(out.XIDHistory, *h)
	}
	slices.SortFunc(out.XIDHistory, func(a, b XIDHistory) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.DeviceID, b.DeviceID))
	})
	for _, g := range v.selected(f) {
		h, ev := v.deviceHealth(g)
		if h == s.HWStateOK {
			continue
		}
		n := NotOK{ID: g.Device.HWID, Node: g.Device.Node, Model: g.Device.Model, Health: h}
		why := failureOf(g.Device, ev)
		n.FailureMode, n.Action, n.ActionDescription, n.Since = why.mode, why.action, why.brief, why.since
		out.DevicesNotOK = append(out.DevicesNotOK, n)
	}
	for _, m := range v.Snap.MPS {
		if !f.match("node", m.Node) || !f.match("cluster", m.Cluster) {
			continue
		}
		out.MPS = append(out.MPS, MPSState{Node: m.Node, Up: m.Up, Servers: Round4Ptr(m.Servers), ActiveThreadPercentage: Round4Ptr(m.ActiveThreads)})
	}
	slices.SortFunc(out.MPS, func(a, b MPSState) int { return cmp.Compare(a.Node, b.Node) })
	return out
}
