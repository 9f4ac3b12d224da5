package e2etest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/cwotlptest"
)

// SigV4Proxy stands in for an AWS service's front door before a real
// server: a loopback HTTP server that verifies every request's Signature
// Version 4 for one region and service with the static test credentials
// (cwotlptest.VerifySigV4, the real signer re-signing the request) and
// forwards what passes, unchanged, to the server behind it. Amazon Managed
// Prometheus is a Prometheus remote-write receiver behind SigV4 for "aps";
// a real Prometheus behind this proxy is the nearest a test gets to it. It
// can be told to be unavailable, as the service is in an outage.
type SigV4Proxy struct {
	// URL is the proxy's base URL; a request to any path under it goes to
	// the target URL (so a client can use the service's own path, such as
	// AMP's /workspaces/<id>/api/v1/remote_write, before a server that
	// has another).
	URL string

	region, service, target string
	srv                     *httptest.Server

	mu         sync.Mutex
	down       int
	forwarded  int
	refused    int
	violations []string
}

// StartSigV4Proxy forwards to the target URL the requests signed for
// region and service, until the test ends.
func StartSigV4Proxy(t testing.TB, target, region, service string) *SigV4Proxy {
	t.Helper()
	p := &SigV4Proxy{region: region, service: service, target: target}
	p.srv = httptest.NewServer(http.HandlerFunc(p.handle))
	p.URL = p.srv.URL
	t.Cleanup(p.srv.Close)
	return p
}

// SetDown makes the proxy answer every request with status instead of
// forwarding it, until Up.
func (p *SigV4Proxy) SetDown(status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = status
}

// Up ends an outage.
func (p *SigV4Proxy) Up() { p.SetDown(0) }

// Forwarded counts the requests the server behind answered.
func (p *SigV4Proxy) Forwarded() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.forwarded
}

// Refused counts the requests answered with the outage's status.
func (p *SigV4Proxy) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// Violations are the requests refused for their signature, one line each.
func (p *SigV4Proxy) Violations() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.violations...)
}

func (p *SigV4Proxy) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	creds := cwotlptest.Credentials{AccessKeyID: TestAccessKeyID, SecretAccessKey: TestSecretAccessKey}
	if err := cwotlptest.VerifySigV4(r, body, creds, p.region, p.service, time.Now()); err != nil {
		p.mu.Lock()
		p.violations = append(p.violations, fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err))
		p.mu.Unlock()
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	p.mu.Lock()
	down := p.down
	if down != 0 {
		p.refused++
	}
	p.mu.Unlock()
	if down != 0 {
		w.Header().Set("Retry-After", "1")
		http.Error(w, http.StatusText(down), down)
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	p.mu.Lock()
	p.forwarded++
	p.mu.Unlock()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
