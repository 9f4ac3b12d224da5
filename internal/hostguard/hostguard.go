// Package hostguard closes the DNS-rebinding door of every HTTP listener we
// serve. A page on attacker.example can make its name resolve to 127.0.0.1
// and then talk to a loopback listener from the victim's browser as its own
// origin: the browser sends Host: attacker.example:<port>, Origin
// http://attacker.example:<port> and Sec-Fetch-Site: same-origin, so a
// check that compares Origin with the request's own Host (or trusts
// Sec-Fetch-Site) waves it through. What the attacker cannot choose is a
// Host that names this listener: the guard answers only requests whose
// Host is one of the names it is allowed to be reached by (localhost,
// 127.0.0.1 and [::1] on its own port, and what allowed_hosts adds), on
// every route, reads included, and refuses any Origin that is not one of
// the allowed origins (derived from those names, and allowed_origins).
package hostguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
)

// Config is what a listener's configuration adds to the names it answers
// to. Squash it into the component's config (`mapstructure:",squash"`).
type Config struct {
	// AllowedHosts are further names (or IP addresses) the listener may be
	// reached by, as a client writes them in the URL: a name alone
	// ("insights.example.com") is allowed on the listener's port and
	// without a port (what a browser sends for 80/443, behind a proxy);
	// name:port allows that port only ("localhost:9000", where kubectl
	// port-forward listens on another local port).
	AllowedHosts []string `mapstructure:"allowed_hosts"`
	// AllowedOrigins are further origins (scheme://host[:port]) whose
	// pages may send requests with an Origin header. The origins of the
	// allowed hosts are allowed without being listed.
	AllowedOrigins []string `mapstructure:"allowed_origins"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// loopbackNames are allowed on every listener, on its own port.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// Check checks the entries' shape: names and addresses, no schemes or
// paths in allowed_hosts; scheme://host[:port] in allowed_origins. (Not
// named Validate: the listener's own Validate calls it, and the collector
// would otherwise report each error twice.)
func (c Config) Check() error {
	var errs []error
	for _, h := range c.AllowedHosts {
		if _, err := parseHost(h); err != nil {
			errs = append(errs, fmt.Errorf("allowed_hosts: %q: %w", h, err))
		}
	}
	for _, o := range c.AllowedOrigins {
		if _, err := parseOrigin(o); err != nil {
			errs = append(errs, fmt.Errorf("allowed_origins: %q: %w", o, err))
		}
	}
	return errors.Join(errs...)
}

// hostPort is a Host header's name (lower case, IPv6 without brackets) and
// port ("" when the header has none).
type hostPort struct{ host, port string }

func (h hostPort) String() string {
	host := h.host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if h.port == "" {
		return host
	}
	return host + ":" + h.port
}

// parseHost reads "name", "name:port", "[v6]", "[v6]:port" or a bare IPv6
// address.
func parseHost(s string) (hostPort, error) {
	if s == "" {
		return hostPort{}, errors.New("empty")
	}
	if strings.ContainsAny(s, "/?#@ \t") {
		return hostPort{}, errors.New("a host name or address, optionally with :port (no scheme, path or user)")
	}
	s = strings.ToLower(s)
	if ip := net.ParseIP(s); ip != nil { // a bare IPv6 address: no port
		return hostPort{host: s}, nil
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		inner := s[1 : len(s)-1]
		if net.ParseIP(inner) == nil {
			return hostPort{}, errors.New("not an IPv6 address in brackets")
		}
		return hostPort{host: inner}, nil
	}
	if !strings.Contains(s, ":") {
		return hostPort{host: s}, nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return hostPort{}, err
	}
	if host == "" || port == "" || strings.Trim(port, "0123456789") != "" {
		return hostPort{}, errors.New("host:port with a numeric port")
	}
	return hostPort{host: host, port: port}, nil
}

// parseOrigin reads scheme://host[:port] into its canonical form.
func parseOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("scheme must be http or https")
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("scheme://host[:port] only")
	}
	h, err := parseHost(u.Host)
	if err != nil {
		return "", err
	}
	return u.Scheme + "://" + h.String(), nil
}

// Guard answers a listener's requests only when their Host and Origin are
// allowed. Safe for concurrent use.
type Guard struct {
	// hosts are the allowed Host headers, port-less forms included.
	hosts map[hostPort]bool
	// origins are the allowed_origins entries; an origin whose host is
	// allowed needs no entry.
	origins  map[string]bool
	listener string
	warn     *componenthealth.Logger
	refused  atomic.Int64
}

// New returns the guard of a listener on port (the port it listens on, as
// the listener reports it: with port 0 configured, the one it was given).
// listener names it in the refusal log lines (e.g. "accelerator_insights
// console").
func New(cfg Config, port, listener string, logger *zap.Logger) (*Guard, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	g := &Guard{hosts: map[hostPort]bool{}, origins: map[string]bool{}, listener: listener,
		warn: componenthealth.NewLogger(logger, time.Minute)}
	for _, n := range loopbackNames {
		g.allowName(n, port)
	}
	for _, h := range cfg.AllowedHosts {
		hp, _ := parseHost(h)
		if hp.port != "" {
			g.hosts[hp] = true
			continue
		}
		g.allowName(hp.host, port)
	}
	for _, o := range cfg.AllowedOrigins {
		canon, _ := parseOrigin(o)
		g.origins[canon] = true
	}
	return g, nil
}

func (g *Guard) allowName(name, port string) {
	g.hosts[hostPort{host: name}] = true
	if port != "" {
		g.hosts[hostPort{host: name, port: port}] = true
	}
}

// Hosts lists the allowed Host headers (sorted), for the log line that
// says where a listener serves.
func (g *Guard) Hosts() []string {
	out := make([]string, 0, len(g.hosts))
	for h := range g.hosts {
		out = append(out, h.String())
	}
	slices.Sort(out)
	return out
}

// CheckHost says why a Host header is refused ("" when it is allowed).
func (g *Guard) CheckHost(host string) string {
	hp, err := parseHost(host)
	if err != nil || !g.hosts[hp] {
		return fmt.Sprintf("Host %q is not a name this %s answers to (allowed: %s; add the name to allowed_hosts)",
			host, g.listener, strings.Join(g.Hosts(), ", "))
	}
	return ""
}

// CheckOrigin says why an Origin header is refused ("" when it is allowed
// or absent). "null" (a sandboxed frame, a file: page) is refused.
func (g *Guard) CheckOrigin(origin string) string {
	if origin == "" {
		return ""
	}
	canon, err := parseOrigin(origin)
	if err == nil {
		if g.origins[canon] {
			return ""
		}
		u, _ := url.Parse(canon)
		if g.CheckHost(u.Host) == "" {
			return ""
		}
	}
	return fmt.Sprintf("cross-origin request refused: Origin %q is not an allowed origin of this %s (add it to allowed_origins, or its host to allowed_hosts)",
		origin, g.listener)
}

// Refused counts the requests refused since New.
func (g *Guard) Refused() int64 { return g.refused.Load() }

// Handler answers a request with a Host that is not allowed with 421
// Misdirected Request, and one with an Origin that is not allowed with 403
// Forbidden, on every route and method, before next sees it. Each refusal
// is counted and logged (at most once a minute per reason, with how many
// were held back).
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := g.CheckHost(r.Host); why != "" {
			g.refuse(w, r, http.StatusMisdirectedRequest, "host", why)
			return
		}
		if why := g.CheckOrigin(r.Header.Get("Origin")); why != "" {
			g.refuse(w, r, http.StatusForbidden, "origin", why)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, code int, kind, why string) {
	g.refused.Add(1)
	g.warn.Warn(kind, g.listener+": refused a request that may come from a DNS-rebinding page or another site",
		zap.String("reason", why), zap.String("method", r.Method), zap.String("path", r.URL.Path),
		zap.String("remote", r.RemoteAddr), zap.Int("status", code))
	http.Error(w, why, code)
}
