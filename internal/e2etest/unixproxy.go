package e2etest

import (
	"io"
	"net"
	"os"
	"sync"
	"testing"
)

// UnixProxy serves a unix socket at Path that relays every connection, byte
// for byte, to another unix socket (the simulator's kubelet socket). It
// lets a test do to a running collector what a kubelet restart does on a
// node: the socket file disappears and open connections break (Remove),
// then a new socket appears at the same path (Serve) — possibly for another
// backend (SetTarget).
type UnixProxy struct {
	Path string

	mu     sync.Mutex
	target string
	l      net.Listener
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// StartUnixProxy serves path, relaying to target, until the test ends.
func StartUnixProxy(t testing.TB, path, target string) *UnixProxy {
	t.Helper()
	p := &UnixProxy{Path: path, target: target, conns: map[net.Conn]struct{}{}}
	if err := p.Serve(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Remove()
		p.wg.Wait()
	})
	return p
}

// Serve creates the socket (again) and accepts connections on it.
func (p *UnixProxy) Serve() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		return nil
	}
	l, err := net.Listen("unix", p.Path)
	if err != nil {
		return err
	}
	p.l = l
	p.wg.Add(1)
	go p.accept(l)
	return nil
}

// Remove closes the socket, deletes its file and breaks every open
// connection.
func (p *UnixProxy) Remove() {
	p.mu.Lock()
	l := p.l
	p.l = nil
	p.mu.Unlock()
	if l != nil {
		_ = l.Close() // also unlinks the file
	}
	_ = os.Remove(p.Path)
	p.dropConns()
}

// SetTarget relays new connections to target and breaks the open ones, so
// clients reconnect to the new backend.
func (p *UnixProxy) SetTarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
	p.dropConns()
}

func (p *UnixProxy) dropConns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

func (p *UnixProxy) accept(l net.Listener) {
	defer p.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		up, err := net.Dial("unix", target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.track(c, up)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			relay(c, up)
			p.untrack(c, up)
		}()
	}
}

func (p *UnixProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
}

func (p *UnixProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

// relay copies both ways until either side ends, then closes both.
func relay(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	_ = a.Close()
	_ = b.Close()
	<-done
}
