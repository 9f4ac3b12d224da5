package kernellog

import (
	"strconv"
	"strings"
	"time"
)

// Clock says what the time prefixes of text sources are relative to.
type Clock struct {
	// Boot is when the kernel started: the zero of dmesg's "[ 1234.567890]"
	// and of /dev/kmsg's microseconds.
	Boot time.Time
	// Now gives the year of the stamps that have none (syslog's "Dec  1
	// 23:42:25", dmesg -H's "[Dec 1 23:42]"; a date later than now is last
	// year's), and the zone of the stamps that have none.
	Now func() time.Time
}

func (c Clock) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// Stamper removes what a tool writes before a kernel message and reads the
// time it gives. It knows the prefixes that the tools on a node write:
//
//	dmesg, --time-format raw       [ 1234.567890] NVRM: …
//	dmesg -r                       <4>[ 1234.567890] NVRM: …
//	dmesg -x (decode)              kern  :warn  : [ 1234.567890] NVRM: …
//	dmesg -T, --time-format ctime  [Tue Dec  1 23:42:25 2026] NVRM: …
//	dmesg -H, --time-format reltime [Dec 1 23:42] NVRM: …   then   [  +0.000844] NVRM: …
//	dmesg --time-format delta      [<    0.000844>] NVRM: …
//	dmesg -d                       [ 1234.567890 <    0.000844>] NVRM: …
//	dmesg --time-format iso        2026-12-01T23:42:25,123456+00:00 NVRM: …
//	dmesg --time-format notime     NVRM: …
//	journalctl -k (short)          Dec 01 23:42:25 host kernel: NVRM: …
//	  short-precise                Dec 01 23:42:25.123456 host kernel: NVRM: …
//	  short-iso, short-iso-precise 2026-12-01T23:42:25[.123456]+0000 host kernel: NVRM: …
//	  short-monotonic              [ 1234.567890] host kernel: NVRM: …
//	  json                         {"__REALTIME_TIMESTAMP":"…","MESSAGE":"NVRM: …",…}
//	syslog RFC 3164 (kern.log)     [<4>]Dec  1 23:42:25 host kernel: [ 1234.567890] NVRM: …
//	syslog RFC 5424                <4>1 2026-12-01T23:42:25.123456+00:00 host kernel - - - NVRM: …
//	/dev/kmsg record               4,1234,1234567890,-;NVRM: …
//
// The relative stamps of dmesg -H and --time-format delta count from the
// line before, so a Stamper keeps the last time it read: use one per source,
// in the order of its lines. A syslog line's own stamp wins over the dmesg
// stamp inside it (it is the wall time; the other is since boot). What it
// does not recognise it leaves in the message: a prefix it keeps costs
// nothing (Parse finds the driver's markers anywhere in the text), a message
// word it took for a prefix would lose the line.
type Stamper struct {
	Clock Clock
	// last is the time of the line before, for relative stamps.
	last time.Time
}

// SplitPrefix reads one line with no line before it (see Stamper).
func SplitPrefix(line string, c Clock) (time.Time, string) {
	s := Stamper{Clock: c}
	return s.Split(line)
}

// Split removes the line's prefixes and returns the time they give (zero
// when none does) and the kernel's message.
func (s *Stamper) Split(line string) (time.Time, string) {
	t, rest := s.split(line)
	if !t.IsZero() {
		s.last = t
	}
	return t, rest
}

func (s *Stamper) split(line string) (time.Time, string) {
	rest := strings.TrimLeft(line, " \t")
	if strings.HasPrefix(rest, "{") {
		if e, ok := decodeJournalEntry([]byte(rest)); ok && e.message != "" {
			return e.time, e.message
		}
	}
	if t, msg, ok := s.kmsgRecord(rest); ok {
		return t, msg
	}
	pri := false
	if after, ok := cutPriority(rest); ok {
		rest, pri = after, true
		if t, msg, ok := s.rfc5424(rest); ok {
			return t, msg
		}
	}
	if !pri {
		rest = cutDecodePrefix(rest)
	}
	var t time.Time
	syslog := false
	switch {
	case len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9':
		if ts, after, comma, ok := isoStamp(rest, s.Clock); ok {
			t, rest = ts, after
			// dmesg's iso form writes a comma before the microseconds and
			// nothing after the stamp; syslog daemons a dot and the host.
			syslog = !comma
		}
	default:
		if ts, after, ok := traditionalStamp(rest, s.Clock); ok {
			t, rest, syslog = ts, after, true
		}
	}
	if syslog {
		rest = cutHostAndTag(rest, false)
	}
	for range 2 { // dmesg may print two stamps (a time and a delta)
		ts, after, ok := s.bracketStamp(rest)
		if !ok {
			break
		}
		if t.IsZero() {
			t = ts
		}
		rest = after
		if !syslog {
			// journalctl -o short-monotonic: "[ 1234.5] host kernel: …"
			if r := cutHostAndTag(rest, true); r != rest {
				rest, syslog = r, true
			}
		}
	}
	return t, rest
}

// kmsgRecord reads "prio,seq,usec,flags;text", a /dev/kmsg record kept in a
// text file.
func (s *Stamper) kmsgRecord(line string) (time.Time, string, bool) {
	if len(line) == 0 || line[0] < '0' || line[0] > '9' {
		return time.Time{}, line, false
	}
	semi := strings.IndexByte(line, ';')
	if semi < 0 || semi > 64 {
		return time.Time{}, line, false
	}
	rec, ok := parseKmsgRecord([]byte(line))
	if !ok {
		return time.Time{}, line, false
	}
	var t time.Time
	if !s.Clock.Boot.IsZero() {
		t = s.Clock.Boot.Add(time.Duration(rec.usec) * time.Microsecond)
	}
	return t, string(rec.text), true
}

// cutPriority removes a syslog or dmesg -r priority, "<4>".
func cutPriority(s string) (string, bool) {
	if len(s) < 3 || s[0] != '<' {
		return s, false
	}
	end := strings.IndexByte(s, '>')
	if end < 2 || end > 4 {
		return s, false
	}
	if _, err := strconv.Atoi(s[1:end]); err != nil {
		return s, false
	}
	return s[end+1:], true
}

// rfc5424 reads what follows the priority of an RFC 5424 message:
// "1 TIMESTAMP HOST APP PROCID MSGID SD [MSG]".
func (s *Stamper) rfc5424(rest string) (time.Time, string, bool) {
	after, ok := strings.CutPrefix(rest, "1 ")
	if !ok {
		return time.Time{}, rest, false
	}
	stamp, after, ok := strings.Cut(after, " ")
	if !ok {
		return time.Time{}, rest, false
	}
	var t time.Time
	if stamp != "-" {
		ts, _, _, ok := isoStamp(stamp+" ", s.Clock)
		if !ok {
			return time.Time{}, rest, false
		}
		t = ts
	}
	// HOSTNAME APP-NAME PROCID MSGID: four header fields, "-" when absent.
	for range 4 {
		_, after, ok = strings.Cut(after, " ")
		if !ok {
			return t, "", true
		}
	}
	msg, ok := cutStructuredData(after)
	if !ok {
		return time.Time{}, rest, false
	}
	msg = strings.TrimPrefix(msg, "\ufeff") // the BOM RFC 5424 allows before a UTF-8 message
	return t, msg, true
}

// cutStructuredData removes RFC 5424's STRUCTURED-DATA: "-" or one or more
// "[id k="v" …]" elements, where a value may escape "]" as "\]".
func cutStructuredData(s string) (string, bool) {
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		return strings.TrimPrefix(rest, " "), true
	}
	for strings.HasPrefix(s, "[") {
		inValue, escaped, end := false, false, -1
		for i := 1; i < len(s) && end < 0; i++ {
			switch c := s[i]; {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inValue = !inValue
			case c == ']' && !inValue:
				end = i
			}
		}
		if end < 0 {
			return s, false
		}
		s = s[end+1:]
	}
	return strings.TrimPrefix(s, " "), true
}

// facilities and levels are the names dmesg -x (--decode) writes as
// "kern  :warn  : ".
var (
	facilities = []string{"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv", "ftp", "res0", "res1", "res2", "res3", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"}
	levels     = []string{"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"}
)

// cutDecodePrefix removes dmesg -x's "facility:level: " prefix.
func cutDecodePrefix(s string) string {
	fac, rest, ok := strings.Cut(s, ":")
	if !ok || len(fac) > 10 || !oneOf(strings.TrimRight(fac, " "), facilities) {
		return s
	}
	lvl, rest, ok := strings.Cut(rest, ":")
	if !ok || len(lvl) > 8 || !oneOf(strings.TrimRight(lvl, " "), levels) {
		return s
	}
	return strings.TrimPrefix(rest, " ")
}

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// isoStamp reads an ISO 8601 stamp and the space after it: dmesg's
// "2026-12-01T23:42:25,123456+00:00", syslog's and journalctl's
// "2026-12-01T23:42:25.123456+00:00", "…+0000", "…Z", or with no zone
// (local time). comma says the fraction was written after a comma.
func isoStamp(s string, c Clock) (t time.Time, rest string, comma bool, ok bool) {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' {
		return time.Time{}, s, false, false
	}
	stamp, rest, found := strings.Cut(s, " ")
	if !found {
		return time.Time{}, s, false, false
	}
	comma = len(stamp) > 19 && stamp[19] == ','
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, stamp); err == nil {
			return t, rest, comma, true
		}
	}
	if t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", stamp, c.now().Location()); err == nil {
		return t, rest, comma, true
	}
	return time.Time{}, s, false, false
}

// traditionalStamp reads syslog's "Dec  1 23:42:25 " (rsyslog) or "Dec 01
// 23:42:25 " (journalctl's short), with ".123456" after the seconds in
// journalctl's short-precise.
func traditionalStamp(s string, c Clock) (time.Time, string, bool) {
	if len(s) < 16 || s[3] != ' ' || s[6] != ' ' || s[9] != ':' || s[12] != ':' {
		return time.Time{}, s, false
	}
	end := 15
	if s[end] == '.' {
		end++
		for end < len(s) && end < 25 && s[end] >= '0' && s[end] <= '9' {
			end++
		}
	}
	if end >= len(s) || s[end] != ' ' {
		return time.Time{}, s, false
	}
	now := c.now()
	stamp := s[:end]
	if stamp[4] == '0' { // journalctl pads the day with a zero, rsyslog with a space
		stamp = stamp[:4] + " " + stamp[5:]
	}
	t, err := time.ParseInLocation("Jan _2 15:04:05.999999999", stamp, now.Location())
	if err != nil {
		return time.Time{}, s, false
	}
	return inYearOf(t, now), s[end+1:], true
}

// inYearOf dates a stamp that has no year: this year's, or last year's when
// that would be later than now (December's lines read in January).
func inYearOf(t, now time.Time) time.Time {
	t = t.AddDate(now.Year()-t.Year(), 0, 0)
	if t.After(now.Add(24 * time.Hour)) {
		t = t.AddDate(-1, 0, 0)
	}
	return t
}

// cutHostAndTag removes what a syslog daemon or journalctl writes between
// its stamp and the message: "host kernel: " or "host kernel[0]: ". With
// kernelOnly, only the kernel's tag is taken as one (after a bracketed
// stamp, anything else is dmesg's message). A first word that ends in ":"
// is the message's own ("NVRM: …"), never a host.
func cutHostAndTag(s string, kernelOnly bool) string {
	host, rest, ok := strings.Cut(s, " ")
	if !ok || host == "" || strings.HasSuffix(host, ":") {
		return s
	}
	tag, after, ok := strings.Cut(rest, " ")
	if !ok || !isTag(tag, kernelOnly) {
		return s
	}
	return after
}

// isTag reports whether word is a syslog tag: "name:" or "name[pid]:",
// the name free of ":" (a PCI address is no tag).
func isTag(word string, kernelOnly bool) bool {
	name, ok := strings.CutSuffix(word, ":")
	if !ok || name == "" {
		return false
	}
	if i := strings.IndexByte(name, '['); i > 0 && strings.HasSuffix(name, "]") {
		name = name[:i]
	}
	if kernelOnly {
		return name == "kernel"
	}
	for _, c := range name {
		if c == ':' || c == '[' || c == ']' || c == ' ' {
			return false
		}
	}
	return true
}

// bracketStamp reads dmesg's bracketed stamps and the space after them:
// "[ 1234.567890]" (seconds since boot), "[ 1234.567890 <    0.000844>]"
// (-d), "[<    0.000844>]" (--time-format delta), "[Tue Dec  1 23:42:25
// 2026]" (-T, ctime, and "<delta>" after it), "[Dec 1 23:42]" and "[
// +0.000844]" (-H, reltime).
func (s *Stamper) bracketStamp(rest string) (time.Time, string, bool) {
	if !strings.HasPrefix(rest, "[") {
		return time.Time{}, rest, false
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 || end > 64 {
		return time.Time{}, rest, false
	}
	inner, after := strings.TrimSpace(rest[1:end]), strings.TrimPrefix(rest[end+1:], " ")
	// A delta after the stamp ("<    0.000844>") or alone.
	delta, hasDelta := time.Duration(0), false
	if i := strings.IndexByte(inner, '<'); i >= 0 && strings.HasSuffix(inner, ">") {
		d, err := strconv.ParseFloat(strings.TrimSpace(inner[i+1:len(inner)-1]), 64)
		if err != nil || d < 0 {
			return time.Time{}, rest, false
		}
		delta, hasDelta = seconds(d), true
		inner = strings.TrimSpace(inner[:i])
	}
	switch {
	case inner == "" && hasDelta:
		return s.after(delta), after, true
	case strings.HasPrefix(inner, "+"):
		d, err := strconv.ParseFloat(inner[1:], 64)
		if err != nil || d < 0 {
			return time.Time{}, rest, false
		}
		return s.after(seconds(d)), after, true
	}
	if secs, err := strconv.ParseFloat(inner, 64); err == nil {
		if secs < 0 || secs >= 1e10 {
			return time.Time{}, rest, false
		}
		if s.Clock.Boot.IsZero() {
			return time.Time{}, after, true
		}
		return s.Clock.Boot.Add(seconds(secs)), after, true
	}
	loc := s.Clock.now().Location()
	if t, err := time.ParseInLocation(time.ANSIC, inner, loc); err == nil {
		return t, after, true
	}
	// reltime's "Dec 1 23:42" (strftime "%b%d %H:%M": "Dec01 23:42", or with
	// the day's space kept by some builds).
	for _, layout := range []string{"Jan02 15:04", "Jan 2 15:04", "Jan _2 15:04"} {
		if t, err := time.ParseInLocation(layout, inner, loc); err == nil {
			return inYearOf(t, s.Clock.now()), after, true
		}
	}
	return time.Time{}, rest, false
}

// after is a relative stamp's time: d after the line before, or unknown
// when no line before gave a time.
func (s *Stamper) after(d time.Duration) time.Time {
	if s.last.IsZero() {
		return time.Time{}
	}
	return s.last.Add(d)
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
