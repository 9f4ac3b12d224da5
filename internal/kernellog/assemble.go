package kernellog

import (
	"fmt"
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

// Skip reasons: why a line that carries a driver's marker made no event of
// its own. Run hands SkipInformational lines to Settings.Skipped; the
// receivers add the others for events they do not turn into health events.
// They are the values of the receivers' kernel_log.skip_reason attribute.
const (
	// SkipInformational: the driver or the PCIe core reporting no fault
	// (the module loading, a serial number, a link reset that followed an
	// error already reported) with no event before it to belong to.
	SkipInformational = "informational"
	// SkipNotAccelerator: a PCIe error on a device that is no accelerator
	// and has none on it or behind it (a USB controller, a NIC).
	SkipNotAccelerator = "not_accelerator"
	// SkipOtherReceiver: another vendor's line, read by that vendor's
	// receiver (an NVIDIA XID in the neuron receiver).
	SkipOtherReceiver = "other_receiver"
	// SkipDuplicate: the same fault on the same device, already reported
	// within the de-duplication window (the kernel prints a failed PCIe
	// recovery once per function and once for the port).
	SkipDuplicate = "duplicate"
)

// Skipper is how a receiver reports what made no health event: Count adds
// one to its kernel_log_lines_skipped counter for a reason, Log logs
// (rate-limited per key). Both receivers report through it, so a skipped
// line reads the same whichever read it.
type Skipper struct {
	Count func(reason string)
	Log   func(key, msg string)
}

// Line reports one line.
func (k Skipper) Line(s Skip) {
	k.Count(s.Reason)
	k.Log("kernellog/skipped/"+s.Reason, s.Describe())
}

// Event reports every line of an event that makes no health event.
func (k Skipper) Event(ev Event, reason string) {
	for _, l := range ev.Lines {
		k.Line(Skip{Where: ev.Where, Reason: reason, Text: l})
	}
}

// Describe says in words why a line was skipped, for the component's log.
func (s Skip) Describe() string {
	why := s.Reason
	switch s.Reason {
	case SkipInformational:
		why = "the driver reporting no fault, with no event before it"
	case SkipNotAccelerator:
		why = "a PCIe error on a device with no accelerator on it or behind it"
	case SkipOtherReceiver:
		why = "another vendor's line, read by that vendor's receiver"
	case SkipDuplicate:
		why = "the same fault on the same device, already reported"
	}
	return fmt.Sprintf("kernel log %s: no health event (%s): %q", s.Where, why, clip(s.Text))
}

// assembler joins the lines of multi-line events: an XID, SXid or "fallen
// off the bus" line and the NVRM lines after it, an AER error and the AER
// lines of the same device or port after it, an NVRM line of a form not
// known yet and the NVRM lines after it. An event is complete when a line
// that is not its continuation arrives, or when the source goes quiet
// (flush).
type assembler struct {
	pending *Event
}

// add takes one parsed line and returns the event it completes, if any,
// and, when the line itself makes no event and belongs to none, why.
func (a *assembler) add(m Message, l Line) (done *Event, skipped string) {
	if a.continues(m) {
		a.extend(m, l)
		return nil, ""
	}
	done = a.flush()
	switch m.Kind {
	case KindNone, kindInfo, kindAERDetail:
		return done, SkipInformational
	case kindNVRMDetail:
		// An NVRM line that belongs to no event before it: a form not known
		// yet, kept with the NVRM lines that follow it.
		m.Kind = KindUnknown
	}
	ev := &Event{Message: m, Time: l.Time, Lines: []string{l.Text}, Where: l.Where}
	switch m.Kind {
	case KindXID, KindSXID, KindFallenOffBus, KindAER, KindUnknown:
		a.pending = ev
		return done, ""
	}
	// GPU at, Neuron: one line each. The GPU-at line comes before the
	// first XID of a GPU, so it goes out first.
	if done != nil {
		a.pending = ev
		return done, ""
	}
	return ev, ""
}

// extend adds a continuation line to the pending event, with what it says
// about the whole: a "fallen off the bus" that ends a block of NVRM lines
// makes the block that; a failed recovery makes a PCIe error fatal.
func (a *assembler) extend(m Message, l Line) {
	p := a.pending
	if len(p.Lines) <= maxDetailLines {
		p.Lines = append(p.Lines, l.Text)
	}
	switch {
	case p.Kind == KindUnknown && m.Kind == KindFallenOffBus:
		p.Kind, p.Text = KindFallenOffBus, m.Text
		if p.Bus == "" {
			p.Bus = m.Bus
		}
	case p.Kind == KindAER && m.Kind == KindAER:
		if m.aer == aerBusError {
			p.aer = aerBusError
			p.Text += "; " + m.Text
		}
		if m.Fatal && !p.Fatal {
			p.Severity, p.Fatal = AERFatal, true
			if m.aer == aerRecovery {
				p.Text += "; " + m.Text
			}
		}
	}
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
		case kindNVRMDetail, kindInfo:
			return p.Kind != KindSXID && (m.Bus == "" || m.Bus == p.Bus)
		case KindFallenOffBus:
			// XID 79 is followed by the driver's own "fallen off the bus".
			return p.Kind == KindXID && p.Code == 79 && (m.Bus == "" || m.Bus == p.Bus)
		}
	case KindUnknown:
		if !strings.Contains(p.Lines[0], "NVRM") {
			return false // one line each: only the driver's blocks run on
		}
		switch m.Kind {
		case kindNVRMDetail, kindInfo, KindFallenOffBus:
			return m.Bus == "" || m.Bus == p.Bus
		}
	case KindAER:
		if m.Bus != p.Bus && (p.Port == "" || m.Bus != p.Port) {
			return false
		}
		switch {
		case m.Kind == kindAERDetail:
			return true
		case m.Kind == KindAER && m.aer == aerBusError:
			return p.aer == aerReceived // the error's own line, after the port's
		case m.Kind == KindAER && m.aer == aerRecovery:
			return true
		}
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
