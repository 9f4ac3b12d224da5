// Package tokenreview asks the Kubernetes API who a bearer token belongs
// to (authentication.k8s.io/v1 TokenReview) and keeps the answers for a
// while, so a gateway receiving from every node reviews each agent's token
// about once per TTL, not once per request.
package tokenreview // import "github.com/otelcol-accel/otelcol-accel/extension/k8stokenauthextension/internal/tokenreview"

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/otelcol-accel/otelcol-accel/internal/senderauth"
)

// The extra fields the API server sets on the user of a token bound to a
// pod (kubernetes.io/docs/reference/access-authn-authz/service-accounts-admin).
const (
	extraPodName  = "authentication.kubernetes.io/pod-name"
	extraPodUID   = "authentication.kubernetes.io/pod-uid"
	extraNodeName = "authentication.kubernetes.io/node-name"
)

// maxEntries bounds the cache: a gateway sees one token per sender (two
// around a rotation); anything beyond is a flood of made-up tokens, and
// the oldest answers give way.
const maxEntries = 10_000

// ErrRejected is a token the API server does not accept for the audiences.
var ErrRejected = errors.New("token rejected")

// Reviewer reviews tokens and caches the answers, accepted or rejected,
// for TTL. Errors reaching the API are not cached.
type Reviewer struct {
	Audiences []string
	TTL       time.Duration
	// Post sends one TokenReview and returns the API server's answer.
	Post func(ctx context.Context, review *authv1.TokenReview) (*authv1.TokenReview, error)
	// OnReview is told the outcome of each call to the API (nil: nothing).
	OnReview func(outcome string)
	Now      func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]entry
}

type entry struct {
	id      senderauth.Identity
	err     error
	expires time.Time
}

// NewPoster posts TokenReviews to the API server of cfg, over client-go's
// transport (its credentials, CA and rate limiter).
func NewPoster(cfg *rest.Config) (func(context.Context, *authv1.TokenReview) (*authv1.TokenReview, error), error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	url := strings.TrimSuffix(cfg.Host, "/") + "/apis/authentication.k8s.io/v1/tokenreviews"
	return func(ctx context.Context, review *authv1.TokenReview) (*authv1.TokenReview, error) {
		body, err := json.Marshal(review)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("POST %s: %s: %s", url, resp.Status, bytes.TrimSpace(raw))
		}
		out := &authv1.TokenReview{}
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("tokenreview answer: %w", err)
		}
		return out, nil
	}, nil
}

// Review returns the token's identity, or ErrRejected (wrapped, with the
// API server's reason), or the error that kept the review from being made.
func (r *Reviewer) Review(ctx context.Context, token string) (senderauth.Identity, error) {
	key := sha256.Sum256([]byte(token))
	now := r.Now()
	r.mu.Lock()
	if e, ok := r.cache[key]; ok && now.Before(e.expires) {
		r.mu.Unlock()
		return e.id, e.err
	}
	r.mu.Unlock()

	review := &authv1.TokenReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"},
		Spec:     authv1.TokenReviewSpec{Token: token, Audiences: r.Audiences},
	}
	ans, err := r.Post(ctx, review)
	if err != nil {
		r.told("unavailable")
		return senderauth.Identity{}, fmt.Errorf("tokenreview: %w", err)
	}
	id, err := r.judge(ans.Status)
	if err != nil {
		r.told("rejected")
	} else {
		r.told("authenticated")
	}
	r.remember(key, entry{id: id, err: err, expires: now.Add(r.TTL)})
	return id, err
}

// judge reads the API server's answer: authenticated, and for one of our
// audiences (the server only says yes when they intersect; checked again
// so that an API server ignoring audiences cannot let an API token in).
func (r *Reviewer) judge(st authv1.TokenReviewStatus) (senderauth.Identity, error) {
	if !st.Authenticated {
		reason := st.Error
		if reason == "" {
			reason = "not authenticated"
		}
		return senderauth.Identity{}, fmt.Errorf("%w: %s", ErrRejected, reason)
	}
	if !intersects(st.Audiences, r.Audiences) {
		return senderauth.Identity{}, fmt.Errorf("%w: the token is for audiences %v, not %v", ErrRejected, st.Audiences, r.Audiences)
	}
	first := func(key string) string {
		if v := st.User.Extra[key]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	return senderauth.Identity{
		Username: st.User.Username, UID: st.User.UID, Groups: st.User.Groups,
		PodName: first(extraPodName), PodUID: first(extraPodUID), NodeName: first(extraNodeName),
	}, nil
}

func intersects(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

func (r *Reviewer) remember(key [sha256.Size]byte, e entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cache == nil {
		r.cache = map[[sha256.Size]byte]entry{}
	}
	if len(r.cache) >= maxEntries {
		now := r.Now()
		for k, old := range r.cache {
			if !now.Before(old.expires) {
				delete(r.cache, k)
			}
		}
		for k := range r.cache { // still full: any one goes (bounded, not ordered)
			if len(r.cache) < maxEntries {
				break
			}
			delete(r.cache, k)
		}
	}
	r.cache[key] = e
}

func (r *Reviewer) told(outcome string) {
	if r.OnReview != nil {
		r.OnReview(outcome)
	}
}
