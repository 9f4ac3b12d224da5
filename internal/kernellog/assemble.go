package kernellog

import (
	"strings"
	"time"
)

// Event is one health-relevant kernel message with the lines that belong
// to it.
type Event struct {
	Message
	// Time is the first line's time.
	Time time.Time
	// Lines are the raw messages, the first one and those that followed it
	// (an XID's NVRM detail lines, an AER error's register dump), at most
	// maxDetailLines+1.
	Lines []string
	// Where names the first line.
	Where string
}

// maxDetailLines bounds what one event collects: the driver prints a
// handful after an XID; more is another event's or a flood.
const maxDetailLines = 16

// assembler joins the lines of multi-line events: an XID, SXid or "fallen
// off the bus" line and the NVRM lines after it, an AER error and the AER
// lines of the same device after it. An event is complete when a line that
// is not its continuation arrives, or when the source goes quiet (flush).
type assembler struct {
	pending *Event
}

// add takes one parsed line and returns the event it completes, if any.
func (a *assembler) add(m Message, l Line) (done *Event) {
	if a.continues(m) {
		if len(a.pending.Lines) <= maxDetailLines {
			a.pending.Lines = append(a.pending.Lines, l.Text)
		}
		return nil
	}
	done = a.flush()
	switch m.Kind {
	case KindNone, kindNVRMDetail, kindAERDetail:
		return done // a detail line with nothing before it to belong to
	}
	ev := &Event{Message: m, Time: l.Time, Lines: []string{l.Text}, Where: l.Where}
	switch m.Kind {
	case KindXID, KindSXID, KindFallenOffBus, KindAER:
		a.pending = ev
		return done
	}
	// GPU at, Neuron: one line each. The GPU-at line comes before the
	// first XID of a GPU, so it goes out first.
	if done != nil {
		a.pending = ev
		return done
	}
	return ev
}

func (a *assembler) continues(m Message) bool {
	p := a.pending
	if p == nil {
		return false
	}
	switch p.Kind {
	case KindXID, KindSXID, KindFallenOffBus:
		switch m.Kind {
		case KindSXID:
			// The switch prints an SXid over several lines with the same
			// code; only the first says Fatal or Non-fatal.
			return p.Kind == KindSXID && m.Bus == p.Bus && m.Code == p.Code && !sxidHeader(m.Text)
		case kindNVRMDetail:
			return m.Bus == "" || m.Bus == p.Bus
		case KindFallenOffBus:
			// XID 79 is followed by the driver's own "fallen off the bus".
			return p.Kind == KindXID && p.Code == 79 && (m.Bus == "" || m.Bus == p.Bus)
		}
	case KindAER:
		return m.Kind == kindAERDetail && m.Bus == p.Bus
	}
	return false
}

// flush returns the pending event and forgets it.
func (a *assembler) flush() *Event {
	p := a.pending
	a.pending = nil
	return p
}

func sxidHeader(text string) bool {
	sev, _, _ := strings.Cut(text, ",")
	sev = strings.TrimSpace(sev)
	return strings.EqualFold(sev, "Fatal") || strings.EqualFold(sev, "Non-fatal")
}
