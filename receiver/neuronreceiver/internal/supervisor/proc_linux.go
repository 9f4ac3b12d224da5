//go:build linux

package supervisor

import "syscall"

// The child leads its own process group, so that SIGTERM and SIGKILL reach
// anything it starts, and it gets SIGKILL if the collector dies without
// stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func terminateGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGTERM) }

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
