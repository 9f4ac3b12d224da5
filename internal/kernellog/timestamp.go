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
	// Now gives the year of syslog's "Dec  1 23:42:25", which has none (a
	// date later than now is last year's), and the zone of the stamps that
	// have none.
	Now func() time.Time
}

func (c Clock) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// SplitPrefix removes what a text source writes before the kernel's
// message and returns the time it gives. It reads the formats of
//
//	dmesg              [ 1234.567890] NVRM: …
//	dmesg -r           <4>[ 1234.567890] NVRM: …
//	dmesg -T           [Tue Dec  1 23:42:25 2026] NVRM: …
//	syslog (kern.log)  Dec  1 23:42:25 host kernel: [ 1234.567890] NVRM: …
//	rsyslog/journalctl 2026-12-01T23:42:25.123456+00:00 host kernel: NVRM: …
//	  (short-iso)      2026-12-01T23:42:25+0000 host kernel: NVRM: …
//
// A syslog line's own stamp wins over the dmesg stamp inside it (it is the
// wall time; the other is since boot). A line with no stamp it knows gives
// the zero time and the line unchanged.
func SplitPrefix(line string, c Clock) (time.Time, string) {
	var t time.Time
	rest := line
	if ts, after, ok := syslogISO(rest, c); ok {
		t, rest = ts, after
	} else if ts, after, ok := syslogTraditional(rest, c); ok {
		t, rest = ts, after
	}
	if ts, after, ok := dmesgStamp(rest, c); ok {
		if t.IsZero() {
			t = ts
		}
		rest = after
	}
	return t, rest
}

// afterHost skips "host kernel: " (or "host kernel[0]: ", or only
// "host "): what the syslog daemon puts between its stamp and the message.
func afterHost(s string) string {
	s = strings.TrimLeft(s, " ")
	_, rest, ok := strings.Cut(s, " ")
	if !ok {
		return s
	}
	if tag, after, ok := strings.Cut(rest, ": "); ok && !strings.Contains(tag, " ") {
		return after
	}
	return rest
}

func syslogISO(s string, c Clock) (time.Time, string, bool) {
	if len(s) < 20 || s[4] != '-' || s[10] != 'T' {
		return time.Time{}, s, false
	}
	stamp, rest, ok := strings.Cut(s, " ")
	if !ok {
		return time.Time{}, s, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05"} {
		var t time.Time
		var err error
		if layout == "2006-01-02T15:04:05" {
			t, err = time.ParseInLocation(layout, stamp, c.now().Location())
		} else {
			t, err = time.Parse(layout, stamp)
		}
		if err == nil {
			return t, afterHost(rest), true
		}
	}
	return time.Time{}, s, false
}

func syslogTraditional(s string, c Clock) (time.Time, string, bool) {
	// "Dec  1 23:42:25 " is 16 bytes.
	if len(s) < 16 || s[3] != ' ' || s[6] != ' ' || s[9] != ':' || s[12] != ':' || s[15] != ' ' {
		return time.Time{}, s, false
	}
	now := c.now()
	t, err := time.ParseInLocation("Jan _2 15:04:05", s[:15], now.Location())
	if err != nil {
		return time.Time{}, s, false
	}
	t = t.AddDate(now.Year(), 0, 0)
	if t.After(now.Add(24 * time.Hour)) {
		t = t.AddDate(-1, 0, 0) // December's lines read in January
	}
	return t, afterHost(s[16:]), true
}

// dmesgStamp reads "[ 1234.567890] " (since boot), "[Tue Dec  1 23:42:25
// 2026] " (dmesg -T, local time) and a "<4>" level before either.
func dmesgStamp(s string, c Clock) (time.Time, string, bool) {
	if len(s) > 2 && s[0] == '<' {
		if end := strings.IndexByte(s, '>'); end > 0 && end < 5 {
			if _, err := strconv.Atoi(s[1:end]); err == nil {
				s = s[end+1:]
			}
		}
	}
	if !strings.HasPrefix(s, "[") {
		return time.Time{}, s, false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return time.Time{}, s, false
	}
	inner, rest := strings.TrimSpace(s[1:end]), strings.TrimPrefix(s[end+1:], " ")
	if secs, err := strconv.ParseFloat(inner, 64); err == nil && secs >= 0 && secs < 1e10 {
		if c.Boot.IsZero() {
			return time.Time{}, rest, true
		}
		return c.Boot.Add(time.Duration(secs * float64(time.Second))), rest, true
	}
	if t, err := time.ParseInLocation(time.ANSIC, inner, c.now().Location()); err == nil {
		return t, rest, true
	}
	return time.Time{}, s, false
}
