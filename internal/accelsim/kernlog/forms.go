package kernlog

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Stamp is a message's place in time, as the forms need it: the wall time,
// the time since boot, the time since the line before, whether it is the
// first line (dmesg -H writes the minute then), and the kernel's sequence
// number.
type Stamp struct {
	Wall      time.Time
	SinceBoot time.Duration
	SincePrev time.Duration
	First     bool
	Seq       int
}

// Form is one way the tools on a node write a kernel message.
type Form struct {
	Name   string
	Render func(s Stamp, msg string) string
	// Resolution is how closely the form dates the message: 0 when it
	// dates nothing (dmesg's delta counts from a line it does not date;
	// notime), a minute for dmesg -H's first line.
	Resolution time.Duration
}

// Forms are every dmesg time format with and without -x's facility and
// level, journalctl -k's outputs, syslog and /dev/kmsg records, as
// util-linux, systemd and the syslog daemons write them.
var Forms = []Form{
	{"dmesg", func(s Stamp, m string) string { return "[" + secs(s.SinceBoot) + "] " + m }, time.Microsecond},
	{"dmesg --time-format raw", func(s Stamp, m string) string { return "[" + secs(s.SinceBoot) + "] " + m }, time.Microsecond},
	{"dmesg -r", func(s Stamp, m string) string { return "<4>[" + secs(s.SinceBoot) + "] " + m }, time.Microsecond},
	{"dmesg -x", func(s Stamp, m string) string { return "kern  :warn  : [" + secs(s.SinceBoot) + "] " + m }, time.Microsecond},
	{"dmesg -T", func(s Stamp, m string) string { return "[" + s.Wall.Format(time.ANSIC) + "] " + m }, time.Second},
	{"dmesg -T -x", func(s Stamp, m string) string { return "kern  :err   : [" + s.Wall.Format(time.ANSIC) + "] " + m }, time.Second},
	{"dmesg --time-format ctime", func(s Stamp, m string) string { return "[" + s.Wall.Format(time.ANSIC) + "] " + m }, time.Second},
	{"dmesg -H", reltime, time.Minute},
	{"dmesg --time-format reltime -x", func(s Stamp, m string) string { return "kern  :warn  : " + reltime(s, m) }, time.Minute},
	{"dmesg --time-format delta", func(s Stamp, m string) string { return fmt.Sprintf("[<%12.6f>] %s", s.SincePrev.Seconds(), m) }, 0},
	{"dmesg -d", func(s Stamp, m string) string {
		return fmt.Sprintf("[%s <%12.6f>] %s", secs(s.SinceBoot), s.SincePrev.Seconds(), m)
	}, time.Microsecond},
	{"dmesg --time-format notime", func(_ Stamp, m string) string { return m }, 0},
	{"dmesg --time-format notime -x", func(_ Stamp, m string) string { return "kern  :crit  : " + m }, 0},
	{"dmesg --time-format iso", func(s Stamp, m string) string { return DmesgISO(s.Wall) + " " + m }, time.Microsecond},
	{"dmesg --time-format iso -x", func(s Stamp, m string) string { return "kern  :warn  : " + DmesgISO(s.Wall) + " " + m }, time.Microsecond},
	{"journalctl -k (short)", func(s Stamp, m string) string { return s.Wall.Format("Jan 02 15:04:05") + " gpu-node-1 kernel: " + m }, time.Second},
	{"journalctl -k -o short-precise", func(s Stamp, m string) string {
		return s.Wall.Format("Jan 02 15:04:05.000000") + " gpu-node-1 kernel: " + m
	}, time.Microsecond},
	{"journalctl -k -o short-iso", func(s Stamp, m string) string {
		return s.Wall.Format("2006-01-02T15:04:05-07:00") + " gpu-node-1 kernel: " + m
	}, time.Second},
	{"journalctl -k -o short-iso (systemd < 250)", func(s Stamp, m string) string {
		return s.Wall.Format("2006-01-02T15:04:05-0700") + " gpu-node-1 kernel: " + m
	}, time.Second},
	{"journalctl -k -o short-iso-precise", func(s Stamp, m string) string {
		return s.Wall.Format("2006-01-02T15:04:05.000000-07:00") + " gpu-node-1 kernel: " + m
	}, time.Microsecond},
	{"journalctl -k -o short-monotonic", func(s Stamp, m string) string { return "[" + secs(s.SinceBoot) + "] gpu-node-1 kernel: " + m }, time.Microsecond},
	{"journalctl -k -o json", journalJSON, time.Microsecond},
	{"syslog RFC 3164 (kern.log)", func(s Stamp, m string) string {
		return s.Wall.Format(time.Stamp) + " gpu-node-1 kernel: [" + secs(s.SinceBoot) + "] " + m
	}, time.Second},
	{"syslog RFC 3164 with priority", func(s Stamp, m string) string { return "<4>" + s.Wall.Format(time.Stamp) + " gpu-node-1 kernel: " + m }, time.Second},
	{"syslog RFC 3339 (rsyslog high precision)", func(s Stamp, m string) string {
		return s.Wall.Format("2006-01-02T15:04:05.000000-07:00") + " gpu-node-1 kernel: " + m
	}, time.Microsecond},
	{"syslog RFC 5424", func(s Stamp, m string) string {
		return "<4>1 " + s.Wall.Format("2006-01-02T15:04:05.000000Z07:00") + " gpu-node-1 kernel - - - " + m
	}, time.Microsecond},
	{"syslog RFC 5424 with structured data", func(s Stamp, m string) string {
		return "<4>1 " + s.Wall.Format("2006-01-02T15:04:05.000000Z07:00") + ` gpu-node-1 kernel - - [timeQuality tzKnown="1" isSynced="0"][origin x="a\]b"] ` + m
	}, time.Microsecond},
	{"/dev/kmsg record", func(s Stamp, m string) string {
		return fmt.Sprintf("4,%d,%d,-;%s", s.Seq, s.SinceBoot.Microseconds(), m)
	}, time.Microsecond},
}

func secs(d time.Duration) string {
	return fmt.Sprintf("%5d.%06d", int64(d/time.Second), (d % time.Second).Microseconds())
}

// DmesgISO is `dmesg --time-format iso`'s stamp: a comma before the
// microseconds, the zone with a colon.
func DmesgISO(t time.Time) string {
	return t.Format("2006-01-02T15:04:05") + "," + fmt.Sprintf("%06d", t.Nanosecond()/1000) + t.Format("-07:00")
}

// reltime is dmesg -H: the minute in full on the first line (and when it
// changes), else the seconds since the line before.
func reltime(s Stamp, m string) string {
	if s.First {
		return "[" + s.Wall.Format("Jan02 15:04") + "] " + m
	}
	return fmt.Sprintf("[  %+8.6f] %s", s.SincePrev.Seconds(), m)
}

// journalJSON is one entry of `journalctl -k -o json`.
func journalJSON(s Stamp, m string) string {
	b, _ := json.Marshal(map[string]string{
		"__CURSOR":             "s=1;i=" + strconv.Itoa(s.Seq),
		"__REALTIME_TIMESTAMP": strconv.FormatInt(s.Wall.UnixMicro(), 10),
		"_TRANSPORT":           "kernel",
		"PRIORITY":             "4",
		"MESSAGE":              m,
		"_HOSTNAME":            "gpu-node-1",
	})
	return string(b)
}
