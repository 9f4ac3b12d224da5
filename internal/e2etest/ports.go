package e2etest

import (
	"fmt"
	"net"
	"testing"
)

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("no free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreeEndpoint returns "127.0.0.1:<free port>".
func FreeEndpoint(t testing.TB) string {
	return fmt.Sprintf("127.0.0.1:%d", FreePort(t))
}
