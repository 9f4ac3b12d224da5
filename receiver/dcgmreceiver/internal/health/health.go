// Package health turns what the sources see into device health: it keeps
// the conditions each GPU is in (lost, uncorrected ECC, row remap pending or
// failed, pages pending retirement, recent XIDs), derives hw.state from the
// worst of them with internal/xid, counts XIDs for hw.errors, and says when
// a health event (a log record) is due.
//
// Conditions that persist (a pending row remap) are announced when they
// appear, including the first time a device is seen in that condition (so a
// restarted collector announces it once more); uncorrected ECC is announced
// again whenever its count grows. XIDs are announced when they happen: from
// NVML's event set, or for dcgm-exporter when DCGM_FI_DEV_XID_ERRORS (the
// last XID, not a count) changes to a non-zero value. The value it holds
// when a device is first seen is taken as the baseline and not announced:
// its age is unknown, and re-announcing it on every restart would trigger
// the same drain twice. Newer dcgm-exporters also print
// DCGM_EXP_XID_ERRORS_COUNT, how often each XID was seen in a window; where
// a GPU reports it, its growth is what is counted and announced (it sees a
// repeat of the same XID, which the last XID cannot), with the same
// first-scrape baseline.
//
// Health is the physical GPU's: hw.status and the XID counts are reported
// on the GPU, its MIG instances' XIDs included.
package health

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// Record is a health event to emit as a log record.
type Record struct {
	Device    model.Identity
	Time      time.Time
	EventName string
	// XID is the XID code, 0 when the event is not an XID.
	XID     int
	Class   xid.Classification
	Message string
	// Sources are the sources that saw the event (nvml, dcgm_exporter,
	// kernel_log), one event however many saw it.
	Sources []string
	// PID and Process are the process the driver named (kernel log only);
	// PID 0 when unknown.
	PID     int
	Process string
	// Detail is what the driver wrote (the kernel log's lines).
	Detail string
}

// Sighting is one source's report of an XID.
type Sighting struct {
	Source  string
	PID     int
	Process string
	Detail  string
}

// XIDCount is how many times one XID was seen on a device.
type XIDCount struct {
	Code  int
	Count int64
}

// Tracker is safe for concurrent use: NVML events arrive on their own
// goroutine while scrapes observe snapshots.
type Tracker struct {
	xidHold     time.Duration
	forgetAfter time.Duration
	// window is how far apart two sources' reports of the same XID on the
	// same GPU may be and still be one event; 0 publishes every report at
	// once (one source only).
	window time.Duration

	mu      sync.Mutex
	devices map[string]*device
	// children are the MIG instances of each GPU (hw.parent → hw.ids), so
	// that a GPU's state and XID counts, asked for every GPU every scrape,
	// look at its own instances rather than at every device of the node.
	children map[string]map[string]struct{}
	// pending are XID events held for window, in the order they were
	// first seen, so that the other sources can join them.
	pending []*Record
}

// maxPending bounds the XID events held for de-duplication: past it (a
// flood), the oldest goes out at once.
const maxPending = 4096

// SetDedupWindow makes reports of the same XID on the same GPU from
// different sources within window one event (see Due). Call before use.
func (t *Tracker) SetDedupWindow(window time.Duration) { t.window = window }

// conditions the tracker derives from samples, in a fixed order so that
// records come out deterministically.
var conditions = []xid.Condition{xid.DeviceLost, xid.ECCUncorrected, xid.RowRemapPending, xid.RowRemapFailed, xid.RetiredPagesPending}

type device struct {
	id       model.Identity
	lastSeen time.Time

	active map[xid.Condition]bool
	held   []heldXID
	counts map[int]int64

	eccUncorrected float64
	lastXID        float64
	xidBaseline    bool

	// xidWindow is the last DCGM_EXP_XID_ERRORS_COUNT seen, by code;
	// windowed is set once the device has reported one, from then on its
	// XIDs are counted from the window, not from the last XID.
	xidWindow map[int]int64
	windowed  bool

	// floods paces the events of one XID from one source (a driver can
	// print thousands of XID 13 a second): every one is counted, at most
	// floodBurst are announced at once and floodRate a second after that.
	floods map[floodKey]*flood
}

type floodKey struct {
	code   int
	source string
}

type flood struct {
	tokens     float64
	last       time.Time
	suppressed int64
}

const (
	floodBurst = 20
	floodRate  = 1.0 // events a second
)

// allow takes one event's token at now; false means the event is counted
// but not announced.
func (d *device) allow(code int, source string, now time.Time) (ok bool, suppressedBefore int64) {
	if d.floods == nil {
		d.floods = map[floodKey]*flood{}
	}
	k := floodKey{code, source}
	f, seen := d.floods[k]
	if !seen {
		if len(d.floods) >= 256 {
			clear(d.floods) // bounded: a device with that many codes is past pacing
		}
		f = &flood{tokens: floodBurst, last: now}
		d.floods[k] = f
	}
	if elapsed := now.Sub(f.last).Seconds(); elapsed > 0 {
		f.tokens = min(floodBurst, f.tokens+elapsed*floodRate)
		f.last = now
	}
	if f.tokens < 1 {
		f.suppressed++
		return false, 0
	}
	f.tokens--
	n := f.suppressed
	f.suppressed = 0
	return true, n
}

type heldXID struct {
	class xid.Classification
	until time.Time
}

// New returns a tracker that holds the state an XID implies for xidHold
// (an XID is an event, not a state: after the hold the device's state comes
// from its conditions again), and forgets devices unseen for forgetAfter so
// that memory follows the devices present, not time.
func New(xidHold, forgetAfter time.Duration) *Tracker {
	return &Tracker{xidHold: xidHold, forgetAfter: forgetAfter, devices: map[string]*device{}, children: map[string]map[string]struct{}{}}
}

func (t *Tracker) device(id model.Identity, now time.Time) *device {
	d, ok := t.devices[id.HWID]
	if !ok {
		d = &device{active: map[xid.Condition]bool{}, counts: map[int]int64{}}
		t.devices[id.HWID] = d
	}
	if !ok || d.id.Parent != id.Parent {
		if ok {
			t.unlink(d.id)
		}
		t.link(id)
	}
	d.id = id
	if now.After(d.lastSeen) {
		d.lastSeen = now
	}
	return d
}

// Observe updates the conditions from one scrape and returns the health
// events it implies.
func (t *Tracker) Observe(snap *model.Snapshot) []Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Record
	for i := range snap.Samples {
		s := &snap.Samples[i]
		d := t.device(s.Identity, snap.Time)
		out = t.observeSample(d, s, snap.Time, out)
	}
	t.prune(snap.Time)
	return out
}

func (t *Tracker) observeSample(d *device, s *model.Sample, now time.Time, out []Record) []Record {
	type reading struct {
		c xid.Condition
		v model.Value
	}
	readings := [...]reading{
		{xid.DeviceLost, model.Bool(s.Lost)},
		{xid.ECCUncorrected, s.Errors[model.ErrECCUncorrected]},
		{xid.RowRemapPending, s.RemapPending},
		{xid.RowRemapFailed, s.RemapFailed},
		{xid.RetiredPagesPending, s.RetirementPending},
	}
	for _, r := range readings {
		c := r.c
		// A lost GPU answers nothing else: keep what was known of the rest.
		if !r.v.OK || (s.Lost && c != xid.DeviceLost) {
			continue
		}
		active := r.v.V > 0
		was := d.active[c]
		d.active[c] = active
		switch {
		case active && !was:
			out = append(out, conditionRecord(d.id, c, now, r.v.V))
		case c == xid.ECCUncorrected && active && r.v.V > d.eccUncorrected:
			out = append(out, conditionRecord(d.id, c, now, r.v.V))
		}
		if c == xid.ECCUncorrected {
			d.eccUncorrected = r.v.V
		}
	}
	switch {
	case s.XIDWindow != nil:
		out = t.observeXIDWindow(d, s.XIDWindow, now, out)
	case d.windowed:
		// The window emptied: dcgm-exporter prints no series for a code
		// it has not seen lately.
		clear(d.xidWindow)
	case s.LastXID.OK:
		code := s.LastXID.V
		if d.xidBaseline && code != d.lastXID && code != 0 {
			out = append(out, t.xid(d, int(code), now, 1, Sighting{Source: SourceDCGMExporter})...)
		}
		d.lastXID, d.xidBaseline = code, true
	}
	return out
}

// observeXIDWindow counts the XIDs that entered dcgm-exporter's window
// since the last scrape: a code whose count grew was seen that many more
// times. The counts of the first scrape that shows the window are a
// baseline of unknown age, as the last XID's is. A count that shrank lost
// old XIDs from the window; XIDs that arrive as others leave between two
// scrapes are not visible in the window (scrape more often than it is long).
// Over the last XID, the window also sees a repeat of the same XID.
func (t *Tracker) observeXIDWindow(d *device, window []model.XIDWindowCount, now time.Time, out []Record) []Record {
	first := !d.windowed
	if d.xidWindow == nil {
		d.xidWindow = map[int]int64{}
	}
	seen := make(map[int]bool, len(window))
	for _, c := range window {
		seen[c.Code] = true
		if grown := c.Count - d.xidWindow[c.Code]; !first && grown > 0 && c.Code != 0 {
			out = append(out, t.xid(d, c.Code, now, grown, Sighting{Source: SourceDCGMExporter})...)
		}
		d.xidWindow[c.Code] = c.Count
	}
	for code := range d.xidWindow {
		if !seen[code] {
			delete(d.xidWindow, code)
		}
	}
	d.windowed = true
	return out
}

// ObserveEvent records an asynchronous driver event and returns the health
// event it implies, if any.
func (t *Tracker) ObserveEvent(e model.Event) []Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.device(e.Device, e.Time)
	switch e.Kind {
	case model.EventXID:
		return t.xid(d, e.Code, e.Time, 1, sighting(e))
	case model.EventRecoveryAction:
		return t.recoveryAction(d, e.Code, e.Time, sighting(e))
	case model.EventDeviceLost:
		if d.active[xid.DeviceLost] {
			return nil
		}
		d.active[xid.DeviceLost] = true
		rec := conditionRecord(d.id, xid.DeviceLost, e.Time, 1)
		join(&rec, sighting(e))
		return []Record{rec}
	}
	return nil
}

func sighting(e model.Event) Sighting {
	src := e.Source
	if src == "" {
		src = SourceNVML
	}
	return Sighting{Source: src, PID: e.PID, Process: e.Process, Detail: e.Detail}
}

// Sources of health events.
const (
	SourceNVML         = "nvml"
	SourceDCGMExporter = "dcgm_exporter"
	SourceKernelLog    = "kernel_log"
)

// xid counts times occurrences of an XID and returns the health events
// due for them: at once without a de-duplication window; with one, the
// occurrences join held events of other sources, or are held themselves
// (Due returns them).
func (t *Tracker) xid(d *device, code int, now time.Time, times int64, sg Sighting) []Record {
	class := xid.Lookup(code)
	return t.sighted(d, code, now, times, sg, func(n int64) Record {
		seen := ""
		if n > 1 {
			seen = fmt.Sprintf(" (%d times since the last scrape)", n)
		}
		return Record{
			Device: d.id, Time: now, EventName: accelschema.EventXID, XID: code, Class: class,
			Message: fmt.Sprintf("XID %d (%s) on %s%s: %s. Recommended action: %s.", code, class.Mnemonic, subject(d.id), seen, class.Description, class.Action),
		}
	})
}

// recoveryAction handles XID 154, whose payload is the driver's recovery
// action for the GPU.
func (t *Tracker) recoveryAction(d *device, action int, now time.Time, sg Sighting) []Record {
	class := xid.RecoveryAction(action)
	if class.State == accelschema.HWStateOK {
		// The driver says nothing needs doing any more: what earlier XIDs
		// implied no longer holds.
		d.held = nil
	}
	return t.sighted(d, class.Code, now, 1, sg, func(int64) Record {
		return Record{
			Device: d.id, Time: now, EventName: accelschema.EventXID, XID: class.Code, Class: class,
			Message: fmt.Sprintf("XID %d (%s) on %s: the driver's recovery action is now %q. Recommended action: %s.",
				class.Code, class.Mnemonic, subject(d.id), recoveryActionName(action), class.Action),
		}
	})
}

// sighted is the one path of every XID report: the report joins a held
// event of the same XID on the same GPU that another source made within
// the window, or makes a new one (counted in hw.errors, its state held).
func (t *Tracker) sighted(d *device, code int, now time.Time, times int64, sg Sighting, build func(n int64) Record) []Record {
	var out []Record
	if t.window > 0 {
		for ; times > 0; times-- {
			p := t.joinable(d, code, now, sg.Source)
			if p == nil {
				break
			}
			join(p, sg)
		}
	}
	if times <= 0 {
		return nil
	}
	rec := build(times)
	d.counts[code] += times
	if rec.Class.State != accelschema.HWStateOK {
		d.held = append(d.held, heldXID{class: rec.Class, until: now.Add(t.xidHold)})
	}
	ok, suppressed := d.allow(code, sg.Source, now)
	if !ok {
		return nil // counted in hw.errors; the next announced one says how many
	}
	if suppressed > 0 {
		rec.Message += fmt.Sprintf(" %d more of this XID from %s since the last event were counted in hw.errors but not announced (a flood: at most %d at once, then %g a second).",
			suppressed, sg.Source, floodBurst, floodRate)
	}
	join(&rec, sg)
	if t.window <= 0 {
		return append(out, rec)
	}
	if len(t.pending) >= maxPending {
		out = append(out, *t.pending[0])
		t.pending = t.pending[1:]
	}
	t.pending = append(t.pending, &rec)
	return out
}

// joinable finds the oldest held event of code on d's physical GPU, within
// the window of now, that source has not joined yet.
func (t *Tracker) joinable(d *device, code int, now time.Time, source string) *Record {
	gpu := physical(d.id)
	for _, p := range t.pending {
		if p.XID != code || physical(p.Device) != gpu || slices.Contains(p.Sources, source) {
			continue
		}
		if gap := now.Sub(p.Time); gap <= t.window && gap >= -t.window {
			return p
		}
	}
	return nil
}

func join(p *Record, sg Sighting) {
	p.Sources = append(p.Sources, sg.Source)
	slices.Sort(p.Sources)
	if p.PID == 0 && sg.PID != 0 {
		p.PID, p.Process = sg.PID, sg.Process
	}
	if p.Detail == "" {
		p.Detail = sg.Detail
	}
}

// physical is the GPU an identity is on: its parent for a MIG instance,
// else its hw.id, else (a GPU no source has named) its bus id.
func physical(id model.Identity) string {
	switch {
	case id.Parent != "":
		return id.Parent
	case id.HWID != "":
		return id.HWID
	}
	return "pci:" + id.PCIBusID
}

func subject(id model.Identity) string {
	switch {
	case id.HWID != "":
		return id.HWID
	case id.PCIBusID != "":
		return "the GPU at PCI " + id.PCIBusID
	}
	return "host " + id.HostName
}

// Due returns the held XID events whose window has passed at now, oldest
// first. With no window nothing is held.
func (t *Tracker) Due(now time.Time) []Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Record
	kept := t.pending[:0]
	for _, p := range t.pending {
		if now.Sub(p.Time) >= t.window {
			out = append(out, *p)
		} else {
			kept = append(kept, p)
		}
	}
	clear(t.pending[len(kept):])
	t.pending = kept
	return out
}

// ObserveCondition records a condition the kernel log reports (a PCIe or
// NVSwitch error) on a device that may be no GPU the sources know, and
// returns its health event.
func (t *Tracker) ObserveCondition(id model.Identity, c xid.Condition, now time.Time, detail string) Record {
	rec := conditionRecord(id, c, now, 0)
	rec.Sources = []string{SourceKernelLog}
	rec.Detail = detail
	if id.HWID == "" {
		return rec
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.device(id, now)
	if rec.Class.State != accelschema.HWStateOK {
		d.held = append(d.held, heldXID{class: rec.Class, until: now.Add(t.xidHold)})
	}
	return rec
}

// ConditionRecord builds the health event for a condition that became
// active; value is the reading behind it (a count for ECC).
func ConditionRecord(id model.Identity, c xid.Condition, now time.Time, value float64) Record {
	return conditionRecord(id, c, now, value)
}

func conditionRecord(id model.Identity, c xid.Condition, now time.Time, value float64) Record {
	class := xid.ForCondition(c)
	detail := class.Description
	if c == xid.ECCUncorrected {
		detail = fmt.Sprintf("%s (now %d)", detail, int64(value))
	}
	return Record{
		Device: id, Time: now, EventName: eventName(c), Class: class,
		Message: fmt.Sprintf("%s on %s: %s. Recommended action: %s.", class.Mnemonic, subject(id), detail, class.Action),
	}
}

func eventName(c xid.Condition) string {
	switch c {
	case xid.ECCUncorrected:
		return accelschema.EventECCUncorrected
	case xid.RowRemapPending, xid.RowRemapFailed, xid.RetiredPagesPending:
		return accelschema.EventRowRemap
	case xid.DeviceLost:
		return accelschema.EventDeviceLost
	case xid.MPSDaemonDown:
		return accelschema.EventMPSDaemonDown
	case xid.PCIeAERFatal, xid.PCIeAERNonFatal, xid.PCIeAERCorrected:
		return accelschema.EventPCIeAER
	case xid.NVSwitchFatal, xid.NVSwitchNonFatal:
		return accelschema.EventNVSwitchError
	case xid.KernelLogUnknown:
		return accelschema.EventKernelLogUnknown
	}
	return accelschema.EventXID
}

func recoveryActionName(action int) string {
	switch action {
	case 0:
		return "none"
	case 1:
		return "GPU reset required"
	case 2:
		return "node reboot required"
	case 3:
		return "drain P2P"
	case 4:
		return "drain and reset"
	}
	return fmt.Sprintf("unknown (%d)", action)
}

// State returns the hw.state of a device at now: the worst of its active
// conditions and held XIDs. A GPU is also at least as bad as any of its MIG
// instances (an XID NVML attributes to an instance is still the GPU's
// health, and hw.status lives on the GPU alone); a MIG instance is at least
// as bad as its GPU.
func (t *Tracker) State(id model.Identity, now time.Time) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	state := t.stateLocked(id.HWID, now)
	if id.Parent != "" {
		return xid.Worse(state, t.stateLocked(id.Parent, now))
	}
	for hwID := range t.children[id.HWID] {
		state = xid.Worse(state, t.stateLocked(hwID, now))
	}
	return state
}

// link and unlink keep children in step with the devices' parents.
func (t *Tracker) link(id model.Identity) {
	if id.Parent == "" || id.Parent == id.HWID {
		return
	}
	c := t.children[id.Parent]
	if c == nil {
		c = map[string]struct{}{}
		t.children[id.Parent] = c
	}
	c[id.HWID] = struct{}{}
}

func (t *Tracker) unlink(id model.Identity) {
	if c := t.children[id.Parent]; c != nil {
		delete(c, id.HWID)
		if len(c) == 0 {
			delete(t.children, id.Parent)
		}
	}
}

func (t *Tracker) stateLocked(hwID string, now time.Time) string {
	state := accelschema.HWStateOK
	d, ok := t.devices[hwID]
	if !ok {
		return state
	}
	for _, c := range conditions {
		if d.active[c] {
			state = xid.Worse(state, xid.ForCondition(c).State)
		}
	}
	kept := d.held[:0]
	for _, h := range d.held {
		if now.Before(h.until) {
			state = xid.Worse(state, h.class.State)
			kept = append(kept, h)
		}
	}
	d.held = kept
	return state
}

// XIDCounts returns how many times each XID was seen on a GPU since the
// receiver started, those seen on its MIG instances included (hw.errors is
// counted once per physical device), ordered by code.
func (t *Tracker) XIDCounts(hwID string) []XIDCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	total := map[int]int64{}
	if d, ok := t.devices[hwID]; ok {
		for code, n := range d.counts {
			total[code] += n
		}
	}
	for id := range t.children[hwID] {
		for code, n := range t.devices[id].counts {
			total[code] += n
		}
	}
	if len(total) == 0 {
		return nil
	}
	out := make([]XIDCount, 0, len(total))
	for code, n := range total {
		out = append(out, XIDCount{Code: code, Count: n})
	}
	slices.SortFunc(out, func(a, b XIDCount) int { return a.Code - b.Code })
	return out
}

func (t *Tracker) prune(now time.Time) {
	for id, d := range t.devices {
		if now.Sub(d.lastSeen) > t.forgetAfter {
			t.unlink(d.id)
			delete(t.devices, id)
		}
	}
}

// Len returns how many devices the tracker remembers.
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.devices)
}
