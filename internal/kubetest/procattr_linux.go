package kubetest

import "syscall"

// procAttr kills the servers when the test binary dies (a panic, a
// timeout), so no etcd or API server outlives its test run.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
