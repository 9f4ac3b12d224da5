package k8sclient

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/fleet"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kubeapi"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

// sim is the simulator's read-only Kubernetes API serving the demo fleet.
type sim struct {
	api   *kubeapi.Server
	http  *httptest.Server
	fleet *fleet.Fleet

	mu       sync.Mutex
	requests []seen
}

// seen is what a test asks of a request: the credentials it carried.
type seen struct {
	authorization string
	clientCerts   int
}

// startSim serves the API over plain HTTP, or over TLS when tlsConfig is
// set (the server's certificate is httptest's, valid for 127.0.0.1).
func startSim(t *testing.T, tlsConfig *tls.Config) *sim {
	t.Helper()
	f := simtest.DemoFleet(t, 0)
	store, err := kubeapi.NewStore(kubeapi.Objects(f))
	require.NoError(t, err)
	s := &sim{api: kubeapi.NewServer(store), fleet: f}
	s.api.Bookmark = 200 * time.Millisecond
	s.http = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		req := seen{authorization: r.Header.Get("Authorization")}
		if r.TLS != nil {
			req.clientCerts = len(r.TLS.PeerCertificates)
		}
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		s.api.ServeHTTP(w, r)
	}))
	// The tls test's refused handshake is expected; keep it out of the log.
	s.http.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tlsConfig != nil {
		s.http.TLS = tlsConfig
		s.http.StartTLS()
	} else {
		s.http.Start()
	}
	t.Cleanup(func() { s.api.Close(); s.http.Close() })
	return s
}

// kubeconfig writes the simulator's kubeconfig and returns the API config
// that reads it.
func (s *sim) kubeconfig(t *testing.T) APIConfig {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, kubeapi.WriteKubeconfig(path, s.http.URL, s.fleet.Cluster))
	return APIConfig{AuthType: AuthKubeConfig, KubeConfig: path}
}

// inCluster points KUBERNETES_SERVICE_HOST and _PORT at the simulator, as
// the kubelet does for a pod.
func (s *sim) inCluster(t *testing.T) {
	u, err := url.Parse(s.http.URL)
	require.NoError(t, err)
	t.Setenv("KUBERNETES_SERVICE_HOST", u.Hostname())
	t.Setenv("KUBERNETES_SERVICE_PORT", u.Port())
}

// seen returns the requests the simulator received.
func (s *sim) seen() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.requests...)
}

// nodes returns a node of the demo fleet with DRA devices, and another node.
func (s *sim) nodes(t *testing.T) (dra, other string) {
	t.Helper()
	for _, n := range s.fleet.Nodes {
		if n.DRA && dra == "" {
			dra = n.Name
		} else if other == "" {
			other = n.Name
		}
	}
	require.NotEmpty(t, dra, "the demo fleet has a DRA node")
	require.NotEmpty(t, other)
	return dra, other
}
