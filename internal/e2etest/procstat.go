package e2etest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
// The kernel fixes it at 100 for user space on every architecture Go
// supports on Linux, whatever CONFIG_HZ is.
const clockTicks = 100

// ProcUsage is what the kernel accounts for a process.
type ProcUsage struct {
	// CPUSeconds is user + system time of all its threads so far.
	CPUSeconds float64
	// RSSBytes is the resident set now (VmRSS); PeakRSSBytes the most it
	// has been (VmHWM).
	RSSBytes, PeakRSSBytes int64
	// RSSAnonBytes is the part of RSSBytes that is the process's own
	// memory (heap, stacks); RSSFileBytes the part that is pages of mapped
	// files — mostly the executable's code, shared and reclaimable.
	RSSAnonBytes, RSSFileBytes int64
}

// ReadProcUsage reads /proc/<pid>/stat and /proc/<pid>/status.
func ReadProcUsage(pid int) (ProcUsage, error) {
	var u ProcUsage
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The command name (field 2) may contain spaces and parentheses; the
	// fields after its closing parenthesis are plain.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return u, fmt.Errorf("/proc/%d/stat: no ')' in %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return u, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	u.CPUSeconds = float64(utime+stime) / clockTicks

	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch key {
		case "VmRSS":
			u.RSSBytes, err = kB(val)
		case "VmHWM":
			u.PeakRSSBytes, err = kB(val)
		case "RssAnon":
			u.RSSAnonBytes, err = kB(val)
		case "RssFile":
			u.RSSFileBytes, err = kB(val)
		}
		if err != nil {
			return u, fmt.Errorf("/proc/%d/status: %s: %w", pid, key, err)
		}
	}
	return u, nil
}

func kB(v string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
	return n * 1024, err
}

// MachineLoad returns the 1-minute load average.
func MachineLoad() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("/proc/loadavg is empty")
	}
	return strconv.ParseFloat(f[0], 64)
}
