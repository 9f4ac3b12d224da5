package k8stokenauthextension

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/credentials"
)

// tokenSource is the sending side: the projected token file, read again
// every refresh interval (the kubelet rewrites it well before it expires).
type tokenSource struct {
	a *auth

	mu     sync.Mutex
	token  string
	readAt time.Time
}

func (t *tokenSource) current() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.a.now()
	if !t.readAt.IsZero() && now.Sub(t.readAt) < t.a.cfg.RefreshInterval {
		return t.token
	}
	t.readAt = now
	if t.a.cfg.TokenFile == "" {
		return "" // the client side is off
	}
	data, err := os.ReadFile(t.a.cfg.TokenFile)
	if err != nil {
		// Outside Kubernetes there is no token: requests go without one,
		// and a gateway that needs one refuses them (it says why).
		t.a.rlog.Warn("token_file", "k8s_token_auth: no token to send; requests go without one",
			zap.String("token_file", t.a.cfg.TokenFile), zap.Error(err))
		t.token = ""
		return ""
	}
	t.a.rlog.Reset("token_file")
	t.token = string(bytes.TrimSpace(data))
	return t.token
}

// PerRPCCredentials implements extensionauth.GRPCClient.
func (t *tokenSource) PerRPCCredentials() (credentials.PerRPCCredentials, error) {
	return perRPC{t}, nil
}

type perRPC struct{ t *tokenSource }

func (p perRPC) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	if tok := p.t.current(); tok != "" {
		return map[string]string{"authorization": "Bearer " + tok}, nil
	}
	return map[string]string{}, nil
}

// RequireTransportSecurity is false: in-cluster OTLP to the gateway is
// often plaintext (agent-to-gateway.yaml's default); the token is bound to
// the gateway's audience and expires within the hour (docs/security.md).
func (perRPC) RequireTransportSecurity() bool { return false }

// RoundTripper implements extensionauth.HTTPClient.
func (t *tokenSource) RoundTripper(base http.RoundTripper) (http.RoundTripper, error) {
	return roundTripper{t: t, base: base}, nil
}

type roundTripper struct {
	t    *tokenSource
	base http.RoundTripper
}

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	tok := r.t.current()
	if tok == "" {
		return r.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tok)
	return r.base.RoundTrip(req)
}
