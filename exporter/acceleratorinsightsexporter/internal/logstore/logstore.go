// Package logstore keeps what the console reads from the logs pipeline:
// health events (bounded, newest kept) and cost findings (merged over their
// repeats, bounded), with each finding's acknowledge/dismiss state, which a
// storage extension keeps across restarts. Prometheus holds no logs, so
// both backends read these from here.
package logstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// statesKey is the storage key of the findings' states.
const statesKey = "finding_states"

// healthEventPrefix is what every health event's name starts with.
var healthEventPrefix = s.EventXID[:strings.LastIndexByte(s.EventXID, '.')+1]

// ErrUnknownFinding is returned for a state change of an id not held.
var ErrUnknownFinding = errors.New("no finding with that id")

// Decision is a user's state for a finding.
type Decision struct {
	State     string    `json:"state"`
	ChangedAt time.Time `json:"changed_at"`
	Note      string    `json:"note,omitempty"`
	// By is who decided (the console's authenticated identity); records
	// saved before it was kept have none.
	By string `json:"by,omitempty"`
	// LastSeen is when its finding was last raised, as far as this
	// store saw (records saved before it was kept have none: ChangedAt
	// stands for it).
	LastSeen time.Time `json:"last_seen,omitzero"`
}

// seen is the newest of the decision's change and its finding's raise.
func (d Decision) seen() time.Time {
	if d.LastSeen.After(d.ChangedAt) {
		return d.LastSeen
	}
	return d.ChangedAt
}

// Store holds events and findings. Safe for concurrent use.
type Store struct {
	maxEvents, maxFindings int

	mu        sync.RWMutex
	events    []fleet.Event // ring, next write at head
	head      int
	findings  map[string]*fleet.Finding
	decisions map[string]Decision
	storage   storage.Client
	// version counts changes, so that the console rebuilds its view only
	// when something changed.
	version atomic.Uint64
	// retention: a decision whose finding is not held and was neither
	// raised nor changed for this long is dropped (prune.go); 0 keeps
	// every decision.
	retention time.Duration
	nextPrune time.Time
}

// Version changes whenever what Snapshot returns may have.
func (st *Store) Version() uint64 { return st.version.Load() }

// New returns an empty store with these bounds.
func New(maxEvents, maxFindings int) *Store {
	return &Store{maxEvents: maxEvents, maxFindings: maxFindings, events: make([]fleet.Event, 0, min(maxEvents, 1024)),
		findings: map[string]*fleet.Finding{}, decisions: map[string]Decision{}}
}

// UseStorage loads the decisions a previous run saved and saves changes
// there from now on. A record that cannot be read is an error (the store
// then keeps the decisions it has, in memory).
func (st *Store) UseStorage(ctx context.Context, c storage.Client) error {
	data, err := c.Get(ctx, statesKey)
	if err != nil {
		return fmt.Errorf("reading %s: %w", statesKey, err)
	}
	loaded := map[string]Decision{}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &loaded); err != nil {
			return fmt.Errorf("reading %s: not the JSON this exporter writes: %w", statesKey, err)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	defer st.version.Add(1)
	st.storage = c
	for id, d := range loaded {
		st.decisions[id] = d
		if f, ok := st.findings[id]; ok {
			apply(f, d)
		}
	}
	return nil
}

// Close forgets the storage client (the caller closes it).
func (st *Store) Close() {
	st.mu.Lock()
	st.storage = nil
	st.mu.Unlock()
}

func apply(f *fleet.Finding, d Decision) {
	f.State = d.State
	t := d.ChangedAt.UTC()
	f.StateChangedAt = &t
	f.StateChangedBy = d.By
	if d.Note != "" {
		note := d.Note
		f.Note = &note
	} else {
		f.Note = nil
	}
}

// Decide sets a finding's state (d: open, acknowledged, dismissed, with
// its note and who decided) and saves all decisions; it returns the
// finding as it is now.
func (st *Store) Decide(ctx context.Context, id string, d Decision, now time.Time) (fleet.Finding, error) {
	st.mu.Lock()
	f, ok := st.findings[id]
	if !ok {
		st.mu.Unlock()
		return fleet.Finding{}, ErrUnknownFinding
	}
	d.ChangedAt, d.LastSeen = now.UTC(), f.LastSeen
	st.decisions[id] = d
	apply(f, d)
	st.version.Add(1)
	out := *f
	var data []byte
	c := st.storage
	if c != nil {
		data, _ = json.Marshal(st.decisions)
	}
	st.mu.Unlock()
	if c != nil {
		if err := c.Set(ctx, statesKey, data); err != nil {
			return out, fmt.Errorf("the state changed but was not saved to storage (it is lost on restart): %w", err)
		}
	}
	return out, nil
}

// Snapshot copies what is held: events newest first, findings.
func (st *Store) Snapshot() fleet.Logs {
	st.mu.RLock()
	defer st.mu.RUnlock()
	out := fleet.Logs{Events: make([]fleet.Event, 0, len(st.events)), Findings: make([]fleet.Finding, 0, len(st.findings))}
	n := len(st.events)
	for i := 0; i < n; i++ {
		// newest first: the one before head, backwards
		out.Events = append(out.Events, st.events[(st.head-1-i+2*n)%n])
	}
	for _, f := range st.findings {
		out.Findings = append(out.Findings, *f)
	}
	return out
}

// Consume reads health events and findings from a batch of logs; other
// records are ignored.
func (st *Store) Consume(ld plog.Logs) {
	defer st.version.Add(1)
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource().Attributes()
		var id *fleet.Identity
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lr := lrs.At(k)
				name := eventName(lr)
				isHealth := strings.HasPrefix(name, healthEventPrefix)
				if !isHealth && name != s.EventFinding {
					continue
				}
				if id == nil {
					x := fleet.IdentityFrom(func(key string) string { return str(res, key) })
					id = &x
				}
				if isHealth {
					st.addEvent(event(id, name, lr, res))
				} else {
					st.addFinding(id, lr)
				}
			}
		}
	}
}

func recordTime(lr plog.LogRecord) time.Time {
	t := lr.Timestamp()
	if t == 0 {
		t = lr.ObservedTimestamp()
	}
	if t == 0 {
		return time.Now().UTC()
	}
	return t.AsTime().UTC()
}

func event(id *fleet.Identity, name string, lr plog.LogRecord, res pcommon.Map) fleet.Event {
	a := lr.Attributes()
	e := fleet.Event{Time: recordTime(lr), Name: name, DeviceID: id.HWID, Node: id.Node, Cluster: id.Cluster,
		Severity: lr.SeverityText()}
	if e.Severity == "" && lr.SeverityNumber() != plog.SeverityNumberUnspecified {
		e.Severity = lr.SeverityNumber().String()
	}
	state := str(a, s.AttrHWState)
	if state == "" {
		state = str(res, s.AttrHWState)
	}
	e.State = opt(state)
	e.FailureMode = opt(str(a, s.AttrHealthFailureMode))
	e.Action = opt(str(a, s.AttrHealthAction))
	desc := str(a, s.AttrHealthDescription)
	if desc == "" {
		desc = lr.Body().AsString()
	}
	e.Description = opt(desc)
	if v, ok := a.Get(s.AttrXID); ok {
		switch v.Type() {
		case pcommon.ValueTypeInt:
			x := v.Int()
			e.XID = &x
		case pcommon.ValueTypeDouble:
			x := int64(v.Double())
			e.XID = &x
		}
	}
	return e
}

func (st *Store) addEvent(e fleet.Event) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.events) < st.maxEvents {
		st.events = append(st.events, e)
		st.head = len(st.events) % st.maxEvents
		return
	}
	st.events[st.head] = e
	st.head = (st.head + 1) % st.maxEvents
}

// FindingID is a finding's stable id: the same kind on the same resource
// for the same workload is one finding however often it is raised.
func FindingID(kind string, id *fleet.Identity) string {
	h := sha256.Sum256([]byte(strings.Join([]string{kind, id.Cluster, id.Node, id.HWID, id.PartitionID, id.Namespace, id.Workload}, "\x00")))
	return "f-" + hex.EncodeToString(h[:6])
}

func (st *Store) addFinding(id *fleet.Identity, lr plog.LogRecord) {
	a := lr.Attributes()
	kind := str(a, s.AttrFindingKind)
	fid := FindingID(kind, id)
	t := recordTime(lr)
	saving := 0.0
	if v, ok := a.Get(s.AttrFindingSavingMonth); ok {
		switch v.Type() {
		case pcommon.ValueTypeDouble:
			saving = v.Double()
		case pcommon.ValueTypeInt:
			saving = float64(v.Int())
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	f, ok := st.findings[fid]
	if !ok {
		if len(st.findings) >= st.maxFindings {
			st.evictOldest()
		}
		f = &fleet.Finding{ID: fid, State: fleet.StateOpen, FirstSeen: t}
		st.findings[fid] = f
		if d, ok := st.decisions[fid]; ok {
			apply(f, d)
		}
	}
	if d, ok := st.decisions[fid]; ok && t.After(d.LastSeen) {
		d.LastSeen = t
		st.decisions[fid] = d
	}
	if t.Before(f.FirstSeen) {
		f.FirstSeen = t
	}
	if !t.Before(f.LastSeen) {
		// The newest raise describes it now.
		f.LastSeen = t
		f.Kind, f.Summary = kind, lr.Body().AsString()
		f.Action, f.Evidence, f.MonthlySaving = str(a, s.AttrFindingAction), str(a, s.AttrFindingEvidence), saving
		f.Target, f.HealthAction, f.FailureMode = opt(str(a, s.AttrFindingTarget)), opt(str(a, s.AttrHealthAction)), opt(str(a, s.AttrHealthFailureMode))
		f.DeviceID, f.Node, f.Cluster = id.HWID, id.Node, id.Cluster
		if id.Parent != "" && id.Parent != id.HWID {
			f.DeviceID = id.Parent
		}
		f.PartitionID = opt(id.PartitionID)
		f.Namespace, f.Pod, f.Team, f.Workload = id.Namespace, id.Pod, id.Team, id.Workload
		f.Identity = *id
	}
	f.Count++
}

// evictOldest drops the finding last seen longest ago; its decision stays.
func (st *Store) evictOldest() {
	var oldest *fleet.Finding
	for _, f := range st.findings {
		if oldest == nil || f.LastSeen.Before(oldest.LastSeen) {
			oldest = f
		}
	}
	if oldest != nil {
		delete(st.findings, oldest.ID)
	}
}

func eventName(lr plog.LogRecord) string {
	if n := lr.EventName(); n != "" {
		return n
	}
	return str(lr.Attributes(), s.AttrEventName)
}

func str(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return v.AsString()
}

func opt(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}
