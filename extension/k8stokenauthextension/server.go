package k8stokenauthextension

import (
	"context"
	"errors"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	authv1 "k8s.io/api/authentication/v1"

	"github.com/otelcol-accel/otelcol-accel/extension/k8stokenauthextension/internal/tokenreview"
	"github.com/otelcol-accel/otelcol-accel/internal/senderauth"
)

// Outcomes of a request's credentials (the outcome attribute).
const (
	outcomeAuthenticated = "authenticated"
	outcomeAnonymous     = "anonymous"
	outcomeMissing       = "missing_token"
	outcomeMalformed     = "malformed"
	outcomeRejected      = "rejected"
	outcomeUnavailable   = "unavailable"
)

// server is the receiving side: it reviews each request's bearer token
// (through the cache) and puts the identity into the context.
type server struct {
	a *auth

	mu       sync.Mutex
	reviewer *tokenreview.Reviewer // built on the first token: the API is reached only when a token arrives
	anonOnce sync.Once
}

// Authenticate implements extensionauth.Server. A refusal is a gRPC
// Unauthenticated status (the HTTP server answers 401).
func (s *server) Authenticate(ctx context.Context, sources map[string][]string) (context.Context, error) {
	header, found := authorization(sources)
	if !found {
		if s.a.cfg.AllowAnonymous {
			s.count(ctx, outcomeAnonymous)
			s.anonOnce.Do(func() {
				s.a.set.Logger.Warn("k8s_token_auth: a request without a token was let in without an identity (allow_anonymous); components that need one (accelerator_sender) refuse its data")
			})
			return ctx, nil
		}
		return ctx, s.refuse(ctx, outcomeMissing, errors.New("no bearer token: send the pod's projected service account token (k8s_token_auth on the exporter)"))
	}
	token, ok := bearer(header)
	if !ok {
		return ctx, s.refuse(ctx, outcomeMalformed, errors.New("the authorization header is not \"Bearer <token>\""))
	}
	r, err := s.reviewerFor()
	if err != nil {
		return s.unavailable(ctx, err)
	}
	id, err := r.Review(ctx, token)
	switch {
	case errors.Is(err, tokenreview.ErrRejected):
		return ctx, s.refuse(ctx, outcomeRejected, err)
	case err != nil:
		return s.unavailable(ctx, err)
	}
	s.count(ctx, outcomeAuthenticated)
	return senderauth.NewContext(ctx, id), nil
}

// unavailable: the token could not be reviewed (no API, no RBAC for
// TokenReview). With allow_anonymous the request goes on without an
// identity, so a gateway missing its TokenReview permission still takes
// metrics while what needs an identity refuses the data, loudly; else it
// is refused with Unavailable, which the sender retries.
func (s *server) unavailable(ctx context.Context, err error) (context.Context, error) {
	if s.a.cfg.AllowAnonymous {
		s.count(ctx, outcomeUnavailable)
		s.a.rlog.Error("unavailable", "k8s_token_auth: the token could not be reviewed; the request goes on without an identity (allow_anonymous). "+
			"Give the gateway's service account create on tokenreviews.authentication.k8s.io", zap.Error(err))
		return ctx, nil
	}
	return ctx, s.refuse(ctx, outcomeUnavailable, err)
}

// refuse counts and logs (rate-limited, per outcome) a refused request
// and returns the error its sender gets.
func (s *server) refuse(ctx context.Context, outcome string, err error) error {
	s.count(ctx, outcome)
	fields := []zap.Field{zap.String("outcome", outcome), zap.Error(err)}
	if addr := peerAddr(ctx); addr != "" {
		fields = append(fields, zap.String("peer", addr))
	}
	s.a.rlog.Warn("refused/"+outcome, "k8s_token_auth: request refused", fields...)
	if outcome == outcomeUnavailable {
		return status.Error(codes.Unavailable, "k8s_token_auth: "+err.Error())
	}
	return status.Error(codes.Unauthenticated, "k8s_token_auth: "+err.Error())
}

func (s *server) count(ctx context.Context, outcome string) {
	s.a.telemetry.ExtensionK8sTokenAuthRequests.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", outcome)))
}

func (s *server) reviewerFor() (*tokenreview.Reviewer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reviewer != nil {
		return s.reviewer, nil
	}
	post := s.a.post
	if post == nil {
		rc, err := s.a.cfg.Kubernetes.RestConfig()
		if err != nil {
			return nil, err
		}
		rc.UserAgent = "otelcol-accel-k8s-token-auth"
		if post, err = tokenreview.NewPoster(rc); err != nil {
			return nil, err
		}
	} else {
		post = func(ctx context.Context, r *authv1.TokenReview) (*authv1.TokenReview, error) { return s.a.post(ctx, r) } // tests swap it
	}
	s.reviewer = &tokenreview.Reviewer{
		Audiences: s.a.cfg.Audiences, TTL: s.a.cfg.CacheTTL, Post: post, Now: s.a.now,
		OnReview: func(outcome string) {
			s.a.telemetry.ExtensionK8sTokenAuthReviews.Add(context.Background(), 1, metric.WithAttributes(attribute.String("outcome", outcome)))
		},
	}
	return s.reviewer, nil
}

// authorization finds the Authorization header: gRPC metadata keys are
// lower case, HTTP headers canonical.
func authorization(sources map[string][]string) (string, bool) {
	for k, v := range sources {
		if strings.EqualFold(k, "authorization") && len(v) > 0 {
			return v[0], true
		}
	}
	return "", false
}

func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
		return "", false
	}
	return token, true
}
