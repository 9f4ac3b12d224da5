package k8stokenauthextension

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	authv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/extension/k8stokenauthextension/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/extension/k8stokenauthextension/internal/tokenreview"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/kubetest"
	"github.com/otelcol-accel/otelcol-accel/internal/senderauth"
)

const (
	testNamespace = "otelcol-accel"
	gatewaySA     = "otelcol-accel-gateway"
)

// startAPIServer starts a real kube-apiserver whose gateway identity may
// create TokenReviews (bound to system:auth-delegator, as the chart binds
// the gateway's account) and returns it with the gateway's kubeconfig.
func startAPIServer(t *testing.T) (*kubetest.Server, string) {
	t.Helper()
	if _, _, err := kubetest.Binaries(); err != nil {
		if kubetest.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ctx := context.Background()
	gateway := kubetest.ServiceAccount(testNamespace, gatewaySA)
	s, err := kubetest.Start(ctx, dir, gateway)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	if err := kubetest.AllowTokenReview(ctx, s.Client(""), testNamespace, gatewaySA); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := s.Kubeconfig(gateway.Name)
	if err != nil {
		t.Fatal(err)
	}
	return s, kubeconfig
}

func newServerSide(t *testing.T, kubeconfig string, mutate func(*Config)) *auth {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Kubernetes = k8sclient.APIConfig{AuthType: k8sclient.AuthKubeConfig, KubeConfig: kubeconfig}
	if mutate != nil {
		mutate(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := newAuth(cfg, extensiontest.NewNopSettings(metadata.Type))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func bearerHeader(tok string) map[string][]string {
	return map[string][]string{"authorization": {"Bearer " + tok}}
}

// An agent's projected token, bound to its pod on its node, authenticates
// as the agent's service account with that pod and node, as the real API
// server's TokenReview says; tokens for another audience, made-up tokens,
// requests without a token, and the token of a deleted pod are refused.
func TestTokenReviewOnARealAPIServer(t *testing.T) {
	s, kubeconfig := startAPIServer(t)
	ctx := context.Background()
	admin := s.Client("")
	agentPod, err := kubetest.PodOnNode(ctx, admin, testNamespace, "otelcol-accel", "otelcol-accel-agent-x7k2p", "gpu-node-a")
	if err != nil {
		t.Fatal(err)
	}
	agentToken, err := kubetest.BoundToken(ctx, admin, agentPod, DefaultAudience)
	if err != nil {
		t.Fatal(err)
	}
	apiToken, err := kubetest.BoundToken(ctx, admin, agentPod, "https://kubernetes.default.svc")
	if err != nil {
		t.Fatal(err)
	}

	a := newServerSide(t, kubeconfig, func(c *Config) { c.CacheTTL = 50 * time.Millisecond })
	var reviews atomic.Int32
	rc, err := a.cfg.Kubernetes.RestConfig()
	if err != nil {
		t.Fatal(err)
	}
	post, err := tokenreview.NewPoster(rc)
	if err != nil {
		t.Fatal(err)
	}
	a.post = func(ctx context.Context, r *authv1.TokenReview) (*authv1.TokenReview, error) {
		reviews.Add(1)
		return post(ctx, r)
	}

	got, err := a.Authenticate(ctx, bearerHeader(agentToken))
	if err != nil {
		t.Fatalf("the agent's bound token was refused: %v", err)
	}
	id, ok := senderauth.FromContext(got)
	want := senderauth.Identity{
		Username: "system:serviceaccount:otelcol-accel:otelcol-accel",
		PodName:  agentPod.Name, PodUID: string(agentPod.UID), NodeName: "gpu-node-a",
	}
	if !ok || id.Username != want.Username || id.PodName != want.PodName || id.PodUID != want.PodUID || id.NodeName != want.NodeName {
		t.Fatalf("identity %+v, want %+v", id, want)
	}
	if !slices.Contains(id.Groups, "system:serviceaccounts:otelcol-accel") {
		t.Errorf("groups %v lack the namespace's service accounts group", id.Groups)
	}
	// Other components read it as client.Info.Auth attributes.
	if n := client.FromContext(got).Auth.GetAttribute(senderauth.AttrNodeName); n != "gpu-node-a" {
		t.Errorf("auth attribute %s = %v", senderauth.AttrNodeName, n)
	}

	// The answer is cached: the same token again makes no second review.
	if _, err := a.Authenticate(ctx, map[string][]string{"Authorization": {"bearer " + agentToken}}); err != nil {
		t.Fatal(err)
	}
	if n := reviews.Load(); n != 1 {
		t.Errorf("%d TokenReviews for one token within cache_ttl, want 1", n)
	}

	for name, sources := range map[string]map[string][]string{
		"a token for the API server's audience": bearerHeader(apiToken),
		"a made-up token":                       bearerHeader("eyJhbGciOiJSUzI1NiJ9.e30.forged"),
		"no token":                              {"content-type": {"application/grpc"}},
		"another scheme":                        {"authorization": {"Basic b3RlbDpvdGVs"}},
	} {
		ctx, err := a.Authenticate(ctx, sources)
		if err == nil {
			t.Errorf("%s was let in", name)
			continue
		}
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s: %v, want an Unauthenticated status", name, err)
		}
		if _, ok := senderauth.FromContext(ctx); ok {
			t.Errorf("%s: refused, yet an identity is in the context", name)
		}
	}

	// The pod is gone: its bound token is no longer accepted once the
	// cached answer expires.
	zero := int64(0)
	if err := admin.CoreV1().Pods(testNamespace).Delete(ctx, agentPod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := a.Authenticate(ctx, bearerHeader(agentToken))
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the token of a deleted pod is still accepted after 30s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// allow_anonymous lets a request without any token through with no
// identity; a bad token is refused all the same.
func TestAllowAnonymous(t *testing.T) {
	a := newServerSide(t, "", func(c *Config) {
		c.AllowAnonymous = true
		c.Kubernetes = k8sclient.APIConfig{AuthType: k8sclient.AuthNone}
	})
	a.post = func(context.Context, *authv1.TokenReview) (*authv1.TokenReview, error) {
		return &authv1.TokenReview{Status: authv1.TokenReviewStatus{Authenticated: false, Error: "invalid bearer token"}}, nil
	}
	ctx, err := a.Authenticate(context.Background(), map[string][]string{})
	if err != nil {
		t.Fatalf("anonymous request refused: %v", err)
	}
	if _, ok := senderauth.FromContext(ctx); ok {
		t.Error("an anonymous request got an identity")
	}
	if _, err := a.Authenticate(context.Background(), bearerHeader("bad")); status.Code(err) != codes.Unauthenticated {
		t.Errorf("a rejected token with allow_anonymous: %v, want Unauthenticated", err)
	}
	// The review cannot be made (no RBAC, no API): the request goes on
	// without an identity rather than losing the sender's metrics.
	a.post = func(context.Context, *authv1.TokenReview) (*authv1.TokenReview, error) {
		return nil, errors.New(`tokenreviews.authentication.k8s.io is forbidden`)
	}
	ctx, err = a.Authenticate(context.Background(), bearerHeader("unreviewable"))
	if err != nil {
		t.Fatalf("an unreviewable token with allow_anonymous: %v", err)
	}
	if _, ok := senderauth.FromContext(ctx); ok {
		t.Error("an unreviewable token got an identity")
	}
	a.cfg.AllowAnonymous = false
	if _, err := a.Authenticate(context.Background(), bearerHeader("unreviewable-2")); status.Code(err) != codes.Unavailable {
		t.Errorf("an unreviewable token without allow_anonymous: %v, want Unavailable", err)
	}
}

// The client side sends the token file's content, read again after the
// refresh interval (the kubelet rewrites it), and nothing when the file is
// missing.
func TestClientSendsTheProjectedToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	cfg := createDefaultConfig().(*Config)
	cfg.TokenFile = file
	cfg.RefreshInterval = time.Minute
	a, err := newAuth(cfg, extensiontest.NewNopSettings(metadata.Type))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	a.now = func() time.Time { return now }
	creds, err := a.PerRPCCredentials()
	if err != nil {
		t.Fatal(err)
	}
	md, err := creds.GetRequestMetadata(context.Background())
	if err != nil || len(md) != 0 {
		t.Fatalf("without a token file: %v %v, want no metadata", md, err)
	}
	if err := os.WriteFile(file, []byte("first-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if md, _ = creds.GetRequestMetadata(context.Background()); md["authorization"] != "Bearer first-token" {
		t.Fatalf("metadata %v", md)
	}
	if err := os.WriteFile(file, []byte("second-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	if md, _ = creds.GetRequestMetadata(context.Background()); md["authorization"] != "Bearer first-token" {
		t.Errorf("re-read before the refresh interval: %v", md)
	}
	now = now.Add(2 * time.Minute)
	if md, _ = creds.GetRequestMetadata(context.Background()); md["authorization"] != "Bearer second-token" {
		t.Errorf("rotated token not sent: %v", md)
	}
}
