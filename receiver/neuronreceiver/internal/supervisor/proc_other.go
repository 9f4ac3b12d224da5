//go:build !linux

package supervisor

import (
	"os"
	"syscall"
)

// neuron-monitor exists only on Linux; elsewhere the child is signalled on
// its own.
func sysProcAttr() *syscall.SysProcAttr { return nil }

func terminateGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Signal(os.Interrupt)
	}
}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
