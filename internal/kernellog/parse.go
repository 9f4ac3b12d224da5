package kernellog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kind is what a kernel message reports.
type Kind int

const (
	// KindNone is a message this package does not read (most of them).
	KindNone Kind = iota
	// KindXID is an NVIDIA driver XID: `NVRM: Xid (PCI:0000:3b:00): 79, …`.
	KindXID
	// KindGPUAt names a GPU's UUID at a bus id, printed before the first XID
	// of a GPU: `NVRM: GPU at PCI:0000:3b:00: GPU-8f3c…`.
	KindGPUAt
	// KindFallenOffBus is the driver's own "fallen off the bus" line, with
	// or without an XID 79 before it.
	KindFallenOffBus
	// KindSXID is an NVSwitch error: `nvidia-nvswitch3: SXid (PCI:…): 12028,
	// Non-fatal, …`: NVLink fabric errors seen by the switch.
	KindSXID
	// KindAER is a PCIe Advanced Error Reporting error on a device:
	// `nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=…`.
	KindAER
	// KindNeuronHWError is the Neuron driver's hardware error line:
	// `NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR … nd-id=0 nc-id=0 …`.
	KindNeuronHWError
	// KindUnknown is a line that carries an accelerator driver's marker
	// (NVRM, Xid, a PCIe error) in a form this package does not know: never
	// dropped, it is an event of its own, with the lines after it that
	// belong to it and the bus id it names, if any.
	KindUnknown
	// kindNVRMDetail is an NVRM line that reports nothing by itself: the
	// lines after an XID that say more about it.
	kindNVRMDetail
	// kindAERDetail is an AER line after the PCIe Bus Error line.
	kindAERDetail
	// kindInfo is a driver line known to report no fault (the module
	// loading, a board's serial number): part of the event before it, or
	// counted as skipped.
	kindInfo
)

var kindNames = [...]string{"none", "xid", "gpu_at", "fallen_off_bus", "sxid", "pcie_aer", "neuron_hw_error", "unknown", "nvrm_detail", "aer_detail", "info"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// AER severities, as the kernel's aer_print_error writes them.
const (
	AERCorrected = "corrected"
	AERNonFatal  = "nonfatal"
	AERFatal     = "fatal"
)

// Message is one kernel message the package reads, parsed.
type Message struct {
	Kind Kind
	// Bus is the device's PCI address in the kernel's canonical form,
	// lower case with the function: "0000:3b:00.0" (NVRM prints the domain
	// without PCI function: that is function 0).
	Bus string
	// Code is the XID or SXid.
	Code int
	// PID and Process are the process the driver names with pid= and name=;
	// PID is 0 when the driver did not know it ("<unknown>") or printed none.
	PID     int
	Process string
	// Text is what the driver said after the code (and pid, name); for
	// Neuron, the error type's whole line.
	Text string
	// UUID is the GPU UUID of a KindGPUAt line.
	UUID string
	// Fatal is set for SXid lines the switch calls fatal and for fatal AER
	// errors.
	Fatal bool
	// Severity is the AER severity (AERCorrected, AERNonFatal, AERFatal).
	Severity string
	// Port is, for an AER error a port reported ("pcieport 0000:00:03.0:
	// AER: Uncorrected (Fatal) error received: 0000:03:00.0"), the port;
	// Bus is then the device the error came from.
	Port string
	// aer says which of an AER error's lines this is.
	aer aerLine
	// Neuron fields: the error type (SRAM_UNCORRECTABLE_ERROR, …), device
	// (nd-id, -1 when not printed), core (nc-id, -1), and the action the
	// driver recommends (TERMINATE_INSTANCE), as printed.
	NeuronError string
	Device      int
	Core        int
	Action      string
}

// aerLine is the part an AER line plays in the report of one error.
type aerLine int

const (
	_ aerLine = iota
	// aerReceived: a port's "… error received: <source>".
	aerReceived
	// aerBusError: "PCIe Bus Error: severity=…, type=…".
	aerBusError
	// aerRecovery: "can't recover (no error_detected callback)", "device
	// recovery failed": the link's devices are left in an unknown state.
	aerRecovery
)

// ErrMalformed wraps what is wrong with a line that looks like one this
// package reads but is not complete (a truncated XID line).
var ErrMalformed = errors.New("malformed")

// Parse reads one kernel message, the text after any timestamp. A message
// of a kind this package does not read is KindNone with no error; one that
// starts like an XID, SXid or Neuron error but cannot be read is an error
// wrapping ErrMalformed.
func Parse(text string) (Message, error) {
	if i := strings.Index(text, "NVRM: "); i >= 0 {
		return parseNVRM(text[i+len("NVRM: "):])
	}
	if i := strings.Index(text, "SXid ("); i >= 0 {
		return parseSXID(text[i+len("SXid "):])
	}
	if i := strings.Index(text, "NEURON_HW_ERR="); i >= 0 {
		return parseNeuron(text[i+len("NEURON_HW_ERR="):])
	}
	if i := strings.Index(text, ": AER: "); i >= 0 {
		return parseAER(text[:i], text[i+len(": AER: "):])
	}
	if i := strings.Index(text, ": PCIe Bus Error: "); i >= 0 {
		// Kernels before 5.x, and ports on later ones, write it without
		// "AER: ".
		return parseAER(text[:i], text[i+len(": "):])
	}
	if strings.Contains(text, "fallen off the bus") {
		return Message{Kind: KindFallenOffBus, Bus: firstBus(text), Text: strings.TrimSpace(text)}, nil
	}
	if relevant(text) {
		return unknown(text), nil
	}
	return Message{Kind: KindNone}, nil
}

// unknown is a line with a driver's marker in a form not known yet.
func unknown(text string) Message {
	return Message{Kind: KindUnknown, Bus: firstBus(text), Text: strings.TrimSpace(text)}
}

// firstBus is the first PCI address in text ("GPU 0000:3b:00.0: …"), or "".
func firstBus(text string) string {
	for f := range strings.FieldsSeq(text) {
		f = strings.TrimPrefix(strings.Trim(f, ":,()."), "PCI:")
		// "0000:3b:00.0": a domain of 4 (8 in NVML's form) digits, so that
		// a time ("13:13:04") is not taken for one.
		if domain, _, _ := strings.Cut(f, ":"); strings.Count(f, ":") != 2 || (len(domain) != 4 && len(domain) != 8) {
			continue
		}
		if bus, ok := canonicalBus(f); ok {
			return bus
		}
	}
	return ""
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// parseNVRM reads what follows "NVRM: ".
func parseNVRM(s string) (Message, error) {
	switch {
	case strings.HasPrefix(s, "Xid "):
		return parseXID(s[len("Xid "):])
	case strings.HasPrefix(s, "GPU at "):
		return parseGPUAt(s[len("GPU at "):])
	case strings.HasPrefix(s, "The NVIDIA GPU ") && !strings.Contains(s, "fallen off the bus"):
		// The first line of r570's "The NVIDIA GPU 0000:b3:00.0 / (PCI ID:
		// …) installed in this system has / fallen off the bus and is not
		// responding to commands.": the bus id is only here.
		return Message{Kind: kindNVRMDetail, Bus: firstBus(s), Text: strings.TrimSpace(s)}, nil
	case strings.Contains(s, "fallen off the bus"):
		// "GPU at 0000:01:00.0 has fallen off the bus." is caught above as
		// GPU at; this is "GPU 0000:3b:00.0: GPU has fallen off the bus."
		// and the like.
		return Message{Kind: KindFallenOffBus, Bus: firstBus(s), Text: strings.TrimSpace(s)}, nil
	case informational(s):
		return Message{Kind: kindInfo, Bus: firstBus(s), Text: strings.TrimSpace(s)}, nil
	}
	return Message{Kind: kindNVRMDetail, Bus: firstBus(s), Text: strings.TrimSpace(s)}, nil
}

// informationalNVRM are the starts of NVRM lines that report no fault:
// the module loading, a GPU's serial number (printed before and after an
// XID), notices about the driver's options.
var informationalNVRM = []string{
	"loading NVIDIA UNIX",
	"GPU Board Serial Number:",
	"Persistence mode is deprecated",
	"nvidia-bug-report.sh",
	"Open NVIDIA GPU kernel module",
}

func informational(s string) bool {
	for _, p := range informationalNVRM {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	// "GPU 0000:01:00.0: GPU serial number is 0."
	return strings.Contains(s, ": GPU serial number is ")
}

// parseXID reads "(PCI:0000:3b:00): 79, pid=1234, name=python, GPU has
// fallen off the bus." in all the forms drivers printed: with or without
// "PCI:", a domain or not ("(0009:00)"), with pid= and name= (r470 on),
// with pid='<unknown>', and without either (older drivers).
func parseXID(s string) (Message, error) {
	inner, rest, ok := parenthesised(s)
	if !ok {
		return Message{}, malformed("XID line without its device: %q", clip(s))
	}
	bus, ok := canonicalBus(strings.TrimPrefix(inner, "PCI:"))
	if !ok {
		return Message{}, malformed("XID line with an unreadable device %q", clip(inner))
	}
	rest, ok = strings.CutPrefix(rest, ":")
	if !ok {
		return Message{}, malformed("XID line without a code after %q", clip(inner))
	}
	rest = strings.TrimLeft(rest, " ")
	code, rest, ok := leadingInt(rest)
	if !ok {
		return Message{}, malformed("XID line without a code: %q", clip(s))
	}
	m := Message{Kind: KindXID, Bus: bus, Code: code}
	rest = strings.TrimPrefix(rest, ",")
	rest = strings.TrimLeft(rest, " ")
	if v, after, ok := field(rest, "pid="); ok {
		// A pid that is no process id ("<unknown>", or a garbled negative
		// number) is an unknown one.
		if pid, err := strconv.Atoi(strings.Trim(v, "'")); err == nil && pid > 0 {
			m.PID = pid
		}
		rest = after
	}
	if v, after, ok := field(rest, "name="); ok {
		if v != "<unknown>" {
			m.Process = v
		}
		rest = after
	}
	m.Text = strings.TrimSpace(rest)
	return m, nil
}

// parseGPUAt reads "PCI:0000:3b:00: GPU-8f3c…" and the older "0000:01:00.0
// has fallen off the bus.".
func parseGPUAt(s string) (Message, error) {
	s = strings.TrimPrefix(s, "PCI:")
	addr, rest, _ := strings.Cut(s, " ")
	bus, ok := canonicalBus(strings.TrimSuffix(addr, ":"))
	if !ok {
		return Message{Kind: kindNVRMDetail, Text: s}, nil
	}
	rest = strings.TrimSpace(rest)
	if strings.Contains(rest, "fallen off the bus") {
		return Message{Kind: KindFallenOffBus, Bus: bus, Text: "GPU at " + s}, nil
	}
	if uuid, _, _ := strings.Cut(rest, " "); strings.HasPrefix(uuid, "GPU-") {
		return Message{Kind: KindGPUAt, Bus: bus, UUID: uuid}, nil
	}
	return Message{Kind: kindNVRMDetail, Bus: bus, Text: s}, nil
}

// parseSXID reads "(PCI:0000:c1:00.0): 12028, Non-fatal, Link 38 …".
func parseSXID(s string) (Message, error) {
	inner, rest, ok := parenthesised(s)
	if !ok {
		return Message{}, malformed("SXid line without its device: %q", clip(s))
	}
	bus, ok := canonicalBus(strings.TrimPrefix(inner, "PCI:"))
	if !ok {
		return Message{}, malformed("SXid line with an unreadable device %q", clip(inner))
	}
	rest = strings.TrimLeft(strings.TrimPrefix(rest, ":"), " ")
	code, rest, ok := leadingInt(rest)
	if !ok {
		return Message{}, malformed("SXid line without a code: %q", clip(s))
	}
	rest = strings.TrimSpace(strings.TrimPrefix(rest, ","))
	m := Message{Kind: KindSXID, Bus: bus, Code: code, Text: rest}
	sev, _, _ := strings.Cut(rest, ",")
	m.Fatal = strings.EqualFold(strings.TrimSpace(sev), "Fatal")
	return m, nil
}

// parseAER reads the kernel's AER lines; prefix is the driver and the
// address of the device that printed the line ("nvidia 0000:3b:00.0",
// "pcieport 0000:00:03.0"), s what follows "AER: ":
//
//	pcieport 0000:00:03.0: AER: Uncorrected (Fatal) error received: 0000:03:00.0
//	pcieport 0000:80:1b.4: AER: Uncorrectable (Non-Fatal) error message received from 0000:84:00.0
//	nvidia 0000:03:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=…, (Receiver ID)
//	nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)
//	pcieport 0000:00:03.0: AER: device recovery failed
//
// and any other AER line as a detail of the error before it (the TLP
// header, "Root Port link has been reset").
func parseAER(prefix, s string) (Message, error) {
	f := strings.Fields(prefix)
	if len(f) == 0 {
		return unknown(prefix + ": " + s), nil
	}
	bus, ok := canonicalBus(f[len(f)-1])
	if !ok {
		return unknown(prefix + ": " + s), nil
	}
	s = strings.TrimSpace(s)
	if body, ok := strings.CutPrefix(s, "PCIe Bus Error: "); ok {
		m := Message{Kind: KindAER, Bus: bus, Text: body, aer: aerBusError}
		sev, _, _ := strings.Cut(strings.TrimPrefix(body, "severity="), ",")
		if !aerSeverity(&m, sev) {
			return Message{}, malformed("AER line with an unknown severity %q", clip(sev))
		}
		return m, nil
	}
	if head, source, ok := cutReceived(s); ok {
		m := Message{Kind: KindAER, Bus: bus, Text: s, aer: aerReceived}
		if src, ok := aerSource(source); ok && src != bus {
			m.Bus, m.Port = src, bus
		}
		if !aerSeverity(&m, head) {
			return Message{}, malformed("AER line with an unknown severity %q", clip(head))
		}
		return m, nil
	}
	if strings.HasPrefix(s, "can't recover") || strings.Contains(s, "recovery failed") {
		return Message{Kind: KindAER, Bus: bus, Text: s, Severity: AERFatal, Fatal: true, aer: aerRecovery}, nil
	}
	return Message{Kind: kindAERDetail, Bus: bus, Text: s}, nil
}

// cutReceived splits "Multiple Uncorrected (Fatal) error received:
// 0000:03:00.0" (and "… error message received from …", kernel 6.x) into
// the severity words and the source.
func cutReceived(s string) (head, source string, ok bool) {
	for _, sep := range []string{" error message received from ", " error received: ", " error received from "} {
		if head, source, ok = strings.Cut(s, sep); ok {
			return head, strings.TrimSpace(source), true
		}
	}
	return "", "", false
}

// aerSource reads the device an error came from: "0000:03:00.0", or old
// kernels' "id=0018" (bus 0x00, device and function 0x18).
func aerSource(s string) (string, bool) {
	s, _, _ = strings.Cut(s, " ")
	if id, ok := strings.CutPrefix(s, "id="); ok {
		v, err := strconv.ParseUint(id, 16, 16)
		if err != nil {
			return "", false
		}
		return fmt.Sprintf("0000:%02x:%02x.%d", v>>8, (v>>3)&0x1f, v&7), true
	}
	return canonicalBus(s)
}

// aerSeverity sets m's severity from "Uncorrected (Fatal)", "Uncorrectable
// (Non-Fatal)", "Corrected", "Multiple Correctable", …
func aerSeverity(m *Message, words string) bool {
	words = strings.TrimPrefix(strings.TrimSpace(words), "Multiple ")
	switch {
	case strings.Contains(words, "Fatal") && !strings.Contains(words, "Non-Fatal"):
		m.Severity, m.Fatal = AERFatal, true
	case strings.HasPrefix(words, "Uncorrect"):
		m.Severity = AERNonFatal
	case strings.HasPrefix(words, "Correct"):
		m.Severity = AERCorrected
	default:
		return false
	}
	return true
}

// parseNeuron reads "SRAM_UNCORRECTABLE_ERROR instance-id=i-… hostname=…
// nd-id=0 nc-id=0 serial-num=… action=TERMINATE_INSTANCE" (the form in the
// Neuron runtime's troubleshooting guide); the fields after the type are
// optional and read where present.
func parseNeuron(s string) (Message, error) {
	typ, rest, _ := strings.Cut(s, " ")
	if typ == "" || strings.ContainsAny(typ, "=\x00") {
		return Message{}, malformed("NEURON_HW_ERR without an error type: %q", clip(s))
	}
	m := Message{Kind: KindNeuronHWError, NeuronError: typ, Device: -1, Core: -1, Text: strings.TrimSpace("NEURON_HW_ERR=" + s)}
	for f := range strings.FieldsSeq(rest) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "nd-id", "device":
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				m.Device = n
			}
		case "nc-id":
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				m.Core = n
			}
		case "action":
			m.Action = v
		}
	}
	return m, nil
}

// parenthesised splits "(inner)rest".
func parenthesised(s string) (inner, rest string, ok bool) {
	if !strings.HasPrefix(s, "(") {
		return "", "", false
	}
	end := strings.IndexByte(s, ')')
	if end < 0 {
		return "", "", false
	}
	return s[1:end], s[end+1:], true
}

func leadingInt(s string) (int, string, bool) {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, s, false
	}
	v, err := strconv.Atoi(s[:n])
	return v, s[n:], err == nil
}

// field reads `key=value, rest`; a value ends at the first ", ".
func field(s, key string) (value, rest string, ok bool) {
	after, ok := strings.CutPrefix(s, key)
	if !ok {
		return "", s, false
	}
	value, rest, found := strings.Cut(after, ", ")
	if !found {
		value, rest = strings.TrimSuffix(after, ","), ""
	}
	return value, strings.TrimLeft(rest, " "), true
}

// CanonicalBus turns the bus ids of NVRM ("0000:3b:00"), the kernel
// ("0000:3b:00.0"), NVML and dcgm-exporter ("00000000:3B:00.0") into one
// form, "0000:3b:00.0", so that they compare equal. ok is false for what is
// not a PCI address.
func CanonicalBus(s string) (string, bool) { return canonicalBus(s) }

func canonicalBus(s string) (string, bool) {
	parts := strings.Split(s, ":")
	var domain, bus, devfn string
	switch len(parts) {
	case 3:
		domain, bus, devfn = parts[0], parts[1], parts[2]
	case 2: // "0009:00": bus (zero-padded to four) and device, domain 0 (pre-2013 drivers)
		domain, bus, devfn = "0", strings.TrimLeft(parts[0], "0"), parts[1]
		if bus == "" {
			bus = "0"
		}
	default:
		return "", false
	}
	dev, fn, hasFn := strings.Cut(devfn, ".")
	if !hasFn {
		fn = "0"
	}
	d, err1 := strconv.ParseUint(domain, 16, 32)
	b, err2 := strconv.ParseUint(bus, 16, 8)
	v, err3 := strconv.ParseUint(dev, 16, 5)
	f, err4 := strconv.ParseUint(fn, 8, 3)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || len(domain) > 8 || len(bus) > 2 || len(dev) > 2 || len(fn) != 1 {
		return "", false
	}
	return fmt.Sprintf("%04x:%02x:%02x.%d", d, b, v, f), true
}

// clip bounds what an error quotes from a line.
func clip(s string) string {
	const most = 120
	if len(s) > most {
		return s[:most] + "…"
	}
	return s
}

// RecoveryAction reads the action XID 154 names: "GPU recovery action
// changed from 0x0 (None) to 0x1 (GPU Reset Required)" gives 1, NVML's
// nvmlGpuRecoveryAction_t value.
func RecoveryAction(text string) (int, bool) {
	_, after, ok := strings.Cut(text, " to 0x")
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(after) && end < 8 && strings.IndexByte("0123456789abcdefABCDEF", after[end]) >= 0 {
		end++
	}
	v, err := strconv.ParseUint(after[:end], 16, 32)
	if err != nil {
		return 0, false
	}
	return int(v), true
}
