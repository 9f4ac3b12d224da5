package acceleratorinsightsexporter

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/web"
)

// contentSecurityPolicy allows the console's own files only: no inline
// script or style, no other origin, never inside a frame.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// csrfHeader carries the session's token on every POST. A browser sends a
// custom header cross-origin only after a CORS preflight, which this
// server never approves.
const csrfHeader = "X-Insights-CSRF"

// securityHeaders sets the headers every answer carries.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// sameOrigin refuses a state-changing request that a browser sent on
// behalf of another site: Sec-Fetch-Site must be same-origin (or none: typed
// by the user), and the session's token must be in csrfHeader. The error
// says which check failed. Host and Origin were checked before, on every
// request, against the allowed names (internal/hostguard), never against
// the request's own Host, which a DNS-rebinding page chooses.
func sameOrigin(r *http.Request, token string) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return "cross-site request refused (Sec-Fetch-Site: " + site + ")"
	}
	if got := r.Header.Get(csrfHeader); got == "" || got != token {
		return "missing or wrong " + csrfHeader + " header (read csrf_token from GET /api/v1/session)"
	}
	return ""
}

// staticHandler serves the embedded console. A path without an extension
// that names no file is a page of the console's router: index.html.
func staticHandler() http.Handler {
	files := http.FileServerFS(web.Assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		if _, err := fs.Stat(web.Assets, name); err != nil {
			if path.Ext(name) != "" {
				http.NotFound(w, r)
				return
			}
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/"
			files.ServeHTTP(w, r2)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// routeMux is the console's mux; it remembers its patterns, so that a test
// can walk every route the console serves.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func newRouteMux() *routeMux { return &routeMux{ServeMux: http.NewServeMux()} }

func (m *routeMux) HandleFunc(pattern string, fn func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, fn)
}

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, h)
}
