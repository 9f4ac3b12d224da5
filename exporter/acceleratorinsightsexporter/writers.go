package acceleratorinsightsexporter

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
)

// defaultApprover is who a write (approval, acknowledge, dismiss, reopen)
// names on a console bound to loopback without an authenticator: whoever
// can reach this machine's loopback, the local console user.
const defaultApprover = "insights console"

// identityAttributes are the attributes auth extensions name their client
// by (oidc: subject; basicauth and a Kubernetes TokenReview: username), in
// the order they are tried.
var identityAttributes = []string{"subject", "username", "sub", "email"}

// bearerTokenAuthType is contrib's bearertokenauth, which checks a token but
// names no one: the identity is then the token's fingerprint.
const bearerTokenAuthType = "bearertokenauth"

// writers decides who may change state through the console and under
// which name the audit records them. The rule (docs/security.md):
//   - an authenticated client writes under its own identity;
//   - with no identity, writes are refused, unless the console listens on
//     loopback only, where they are recorded as the local console user;
//   - a console beyond loopback without an authenticator is read-only.
//
// Set once in Start, before the server serves; read-only afterwards.
type writers struct {
	loopback bool          // the listener is on loopback (or a unix socket)
	auth     *component.ID // the server's authenticator; nil: none
	endpoint string
}

// newWriters reads the listener's address and the server's auth.
func newWriters(cfg *Config, addr net.Addr) *writers {
	w := &writers{loopback: isLoopback(addr), endpoint: addr.String()}
	if cfg.Auth.HasValue() {
		id := cfg.Auth.Get().Config.AuthenticatorID
		w.auth = &id
	}
	return w
}

// isLoopback: a TCP listener on a loopback address, or a unix socket (the
// file's permissions say who may connect).
func isLoopback(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

// readOnly says why the console takes no writes ("" when it does).
func (w *writers) readOnly() string {
	if w == nil || w.loopback || w.auth != nil {
		return ""
	}
	return fmt.Sprintf("read-only: the console listens on %s, beyond loopback, and no authenticator is configured, "+
		"so nobody could be named in the audit; set auth.authenticator (bearertokenauth, oidc; docs/security.md) "+
		"or listen on 127.0.0.1 only", w.endpoint)
}

// errNoIdentity is a write from a client the authenticator named no one.
var errNoIdentity = errors.New("refused: the request carries no authenticated identity, and the console is reachable beyond loopback")

// identity is who a write is recorded as, or why it is refused. The
// collector's auth interceptor has authenticated the request before the
// console sees it (a request it refuses never arrives).
func (w *writers) identity(r *http.Request) (string, error) {
	if why := w.readOnly(); why != "" {
		return "", errors.New(why)
	}
	if w != nil && w.auth != nil {
		if who := authenticatedName(r, *w.auth); who != "" {
			return who, nil
		}
	}
	if w == nil || w.loopback {
		return defaultApprover, nil
	}
	return "", errNoIdentity
}

// authenticatedName is the name the authenticator gave the client, or,
// with bearertokenauth (which names no one), "<authenticator> token
// sha256:<12 hex>" of the token it accepted from the Authorization header.
func authenticatedName(r *http.Request, auth component.ID) string {
	if info := client.FromContext(r.Context()); info.Auth != nil {
		for _, k := range identityAttributes {
			if s, ok := info.Auth.GetAttribute(k).(string); ok && s != "" {
				return s
			}
		}
	}
	if auth.Type().String() != bearerTokenAuthType {
		return ""
	}
	h := r.Header.Get("Authorization")
	if _, token, ok := strings.Cut(h, " "); ok && token != "" {
		sum := sha256.Sum256([]byte(token))
		return auth.String() + " token sha256:" + hex.EncodeToString(sum[:6])
	}
	return ""
}

// authorize answers a write that is not allowed (403, saying why) and
// returns who an allowed one is recorded as: the browser's checks first
// (sameOrigin: another site's page, the CSRF token), then the identity.
func (w *writers) authorize(rw http.ResponseWriter, r *http.Request, token string) (who string, ok bool) {
	if msg := sameOrigin(r, token); msg != "" {
		writeError(rw, http.StatusForbidden, errors.New(msg))
		return "", false
	}
	who, err := w.identity(r)
	if err != nil {
		writeError(rw, http.StatusForbidden, err)
		return "", false
	}
	return who, true
}
