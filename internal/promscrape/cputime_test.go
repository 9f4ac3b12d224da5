//go:build unix

package promscrape

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU adds cpu-ns/op: the process's CPU time (user and system, GC
// included) per operation since start. On a shared machine it moves far
// less with other load than the wall time of ns/op does.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
