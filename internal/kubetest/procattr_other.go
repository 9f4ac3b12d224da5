//go:build !linux

package kubetest

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }
