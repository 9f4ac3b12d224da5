package k8stokenauthextension

import (
	"errors"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
)

// DefaultAudience is the audience the shipped manifests bind the agents'
// projected tokens to: a token for the gateway, useless to the API server
// and to anything else that checks audiences.
const DefaultAudience = "otelcol-accel-gateway"

// Config is both sides' configuration; a collector uses the side its
// receivers (server) or exporters (client) reference.
type Config struct {
	// TokenFile is the client side's token: the pod's projected service
	// account token, which the kubelet renews in place; it is read again
	// every RefreshInterval. A missing file sends no token (and says so
	// once): outside Kubernetes there is none to send. Empty: send none,
	// silently.
	TokenFile       string        `mapstructure:"token_file"`
	RefreshInterval time.Duration `mapstructure:"refresh_interval"`

	// Audiences the server side accepts tokens for; the TokenReview asks
	// for them, so a token minted for the API server (or anything else)
	// is refused.
	Audiences []string `mapstructure:"audiences"`
	// CacheTTL is how long a review's answer, yes or no, is reused. A
	// deleted pod's token stays accepted at most this long.
	CacheTTL time.Duration `mapstructure:"cache_ttl"`
	// AllowAnonymous lets requests that carry no token at all through,
	// without an identity: what needs one (accelerator_sender before the
	// remediator) refuses their data, the rest (metrics for Prometheus)
	// takes it. A request with a token that fails review is always refused.
	AllowAnonymous bool `mapstructure:"allow_anonymous"`
	// Kubernetes is how the server side reaches the TokenReview API
	// (internal/k8sclient's keys). Its identity needs create on
	// tokenreviews.authentication.k8s.io (ClusterRole system:auth-delegator,
	// or the chart's otelcol-accel-tokenreview).
	Kubernetes k8sclient.APIConfig `mapstructure:"kubernetes"`
}

// Validate checks the shape only; the API is reached on first use.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Audiences) == 0 {
		errs = append(errs, errors.New("audiences is empty: name the audience the agents' projected tokens are bound to (otelcol-accel-gateway in the shipped manifests)"))
	}
	for _, a := range c.Audiences {
		if a == "" {
			errs = append(errs, errors.New("audiences has an empty entry"))
		}
	}
	if c.CacheTTL <= 0 {
		errs = append(errs, errors.New("cache_ttl must be positive (a review per request would load the API server)"))
	}
	if c.RefreshInterval <= 0 {
		errs = append(errs, errors.New("refresh_interval must be positive"))
	}
	if err := c.Kubernetes.Check(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
