package k8stokenauthextension

import (
	"context"
	"net"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"google.golang.org/grpc/credentials"
	authv1 "k8s.io/api/authentication/v1"

	"github.com/otelcol-accel/otelcol-accel/extension/k8stokenauthextension/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
)

// auth is one k8s_token_auth instance, both sides.
type auth struct {
	cfg       *Config
	set       extension.Settings
	telemetry *metadata.TelemetryBuilder
	rlog      *componenthealth.Logger
	now       func() time.Time
	// post replaces the TokenReview call (nil: the API of cfg.Kubernetes).
	post func(context.Context, *authv1.TokenReview) (*authv1.TokenReview, error)

	server *server
	client *tokenSource
}

var (
	_ extension.Extension      = (*auth)(nil)
	_ extensionauth.Server     = (*auth)(nil)
	_ extensionauth.GRPCClient = (*auth)(nil)
	_ extensionauth.HTTPClient = (*auth)(nil)
)

func newAuth(cfg *Config, set extension.Settings) (*auth, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	a := &auth{cfg: cfg, set: set, telemetry: tb, rlog: componenthealth.NewLogger(set.Logger, time.Minute), now: time.Now}
	a.server = &server{a: a}
	a.client = &tokenSource{a: a}
	return a, nil
}

// Start reaches nothing: the server side builds its API client on the
// first token it sees, the client side reads the token file on the first
// request; a collector that lists the extension without using one side
// needs nothing for it.
func (*auth) Start(context.Context, component.Host) error { return nil }

func (a *auth) Shutdown(context.Context) error {
	a.telemetry.Shutdown()
	return nil
}

func (a *auth) Authenticate(ctx context.Context, sources map[string][]string) (context.Context, error) {
	return a.server.Authenticate(ctx, sources)
}

func (a *auth) PerRPCCredentials() (credentials.PerRPCCredentials, error) {
	return a.client.PerRPCCredentials()
}

func (a *auth) RoundTripper(base http.RoundTripper) (http.RoundTripper, error) {
	return a.client.RoundTripper(base)
}

func peerAddr(ctx context.Context) string {
	addr := client.FromContext(ctx).Addr
	if addr == nil {
		return ""
	}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	return addr.String()
}
