package e2etest

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// SwitchProxy is an HTTP endpoint on loopback that forwards to an upstream
// the test can change while a collector scrapes it: the same URL suddenly
// serves another node's dcgm-exporter (a node that grew tenfold) or a
// server that answers garbage.
type SwitchProxy struct {
	// URL is the proxy's base URL; scrape URL + the upstream's path.
	URL string

	mu       sync.Mutex
	upstream *url.URL
}

// StartSwitchProxy starts a proxy to upstream (scheme://host:port).
func StartSwitchProxy(t testing.TB, upstream string) *SwitchProxy {
	t.Helper()
	p := &SwitchProxy{}
	p.SetUpstream(t, upstream)
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			p.mu.Lock()
			u := p.upstream
			p.mu.Unlock()
			r.SetURL(u)
		},
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// SetUpstream switches where requests go from now on.
func (p *SwitchProxy) SetUpstream(t testing.TB, upstream string) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" {
		t.Fatalf("upstream %q is not a URL: %v", upstream, err)
	}
	u.Path, u.RawQuery = "", ""
	p.mu.Lock()
	p.upstream = u
	p.mu.Unlock()
}

// ServeFunc starts a loopback HTTP server answering every request with h,
// for a fake outside service written in the test (a garbage target).
func ServeFunc(t testing.TB, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
