package k8sclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func listNodes(t *testing.T, c APIConfig) (int, error) {
	t.Helper()
	client, err := NewClient(c)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := cache.ToListerWatcherWithContext(client.ListWatch(typedKinds[Nodes].gvr, nil)).ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(list.(*corev1.NodeList).Items), nil
}

func TestKubeConfigReadsTheNamedFile(t *testing.T) {
	s := startSim(t, nil)
	n, err := listNodes(t, s.kubeconfig(t))
	require.NoError(t, err)
	assert.Equal(t, len(s.fleet.Nodes), n)
}

// context picks a context of the kubeconfig; its user's credentials are used.
func TestKubeConfigContextAndCredentials(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- {name: prod, cluster: {server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true}}
- {name: lab, cluster: {server: "https://10.0.0.2:6443", insecure-skip-tls-verify: true}}
users:
- {name: agent, user: {token: agent-token}}
contexts:
- {name: prod, context: {cluster: prod, user: agent}}
- {name: lab, context: {cluster: lab, user: agent}}
current-context: prod
`), 0o600))
	cfg, err := APIConfig{AuthType: AuthKubeConfig, KubeConfig: path}.RestConfig()
	require.NoError(t, err)
	assert.Equal(t, "https://10.0.0.1:6443", cfg.Host)
	assert.Equal(t, "agent-token", cfg.BearerToken)
	cfg, err = APIConfig{AuthType: AuthKubeConfig, KubeConfig: path, Context: "lab"}.RestConfig()
	require.NoError(t, err)
	assert.Equal(t, "https://10.0.0.2:6443", cfg.Host)
	_, err = APIConfig{AuthType: AuthKubeConfig, KubeConfig: path, Context: "staging"}.RestConfig()
	assert.ErrorContains(t, err, "staging")
}

// auth_type none is contrib's: the in-cluster address, no credentials, and
// the server's certificate not verified (httptest's is self-signed).
func TestNoneSendsNoCredentialsAndTrustsAnyServer(t *testing.T) {
	s := startSim(t, &tls.Config{})
	s.inCluster(t)
	n, err := listNodes(t, APIConfig{AuthType: AuthNone})
	require.NoError(t, err)
	assert.Equal(t, len(s.fleet.Nodes), n)
	for _, r := range s.seen() {
		assert.Empty(t, r.authorization)
		assert.Zero(t, r.clientCerts)
	}
}

// auth_type tls presents the client certificate and verifies the server.
func TestTLSPresentsTheClientCertificate(t *testing.T) {
	dir := t.TempDir()
	clientCert, certFile, keyFile := writeClientCert(t, dir)
	pool := x509.NewCertPool()
	pool.AddCert(clientCert)
	s := startSim(t, &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool})
	s.inCluster(t)
	caFile := filepath.Join(dir, "ca.crt")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.http.Certificate().Raw}), 0o600))

	n, err := listNodes(t, APIConfig{AuthType: AuthTLS, CertFile: certFile, KeyFile: keyFile, CAFile: caFile})
	require.NoError(t, err)
	assert.Equal(t, len(s.fleet.Nodes), n)
	seen := s.seen()
	require.NotEmpty(t, seen)
	assert.Equal(t, 1, seen[len(seen)-1].clientCerts)
	assert.Empty(t, seen[len(seen)-1].authorization)

	// Without ca_file the server is checked against the system's roots,
	// which do not know httptest's certificate: verification is on.
	_, err = listNodes(t, APIConfig{AuthType: AuthTLS, CertFile: certFile, KeyFile: keyFile})
	assert.ErrorContains(t, err, "certificate")
}

func TestInClusterAuthNeedsAPod(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	_, err := NewClient(APIConfig{AuthType: AuthServiceAccount})
	assert.ErrorContains(t, err, "auth_type serviceAccount needs to run in a pod")
	for _, auth := range []AuthType{AuthNone, AuthTLS} {
		_, err = NewClient(APIConfig{AuthType: auth, CertFile: "c", KeyFile: "k"})
		assert.ErrorContains(t, err, "auth_type "+string(auth)+" needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT")
	}
	_, err = NewClient(APIConfig{AuthType: AuthKubeConfig, KubeConfig: "/nonexistent/kubeconfig"})
	assert.ErrorContains(t, err, "/nonexistent/kubeconfig")
	_, err = NewClient(APIConfig{AuthType: "token"})
	assert.ErrorContains(t, err, "is not one of")
}

// The in-cluster API is never reached through HTTPS_PROXY; a kubeconfig
// keeps client-go's proxy handling (its proxy-url, then the environment).
func TestRestConfigProxyAndLimits(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	cfg, err := APIConfig{AuthType: AuthNone, QPS: 20, Burst: 40}.RestConfig()
	require.NoError(t, err)
	assert.Equal(t, "https://10.96.0.1:443", cfg.Host)
	require.NotNil(t, cfg.Proxy)
	proxy, err := cfg.Proxy(&http.Request{})
	assert.NoError(t, err)
	assert.Nil(t, proxy)
	assert.Equal(t, float32(20), cfg.QPS)
	assert.Equal(t, 40, cfg.Burst)
	assert.Equal(t, "otelcol-accel", cfg.UserAgent)

	s := startSim(t, nil)
	cfg, err = s.kubeconfig(t).RestConfig()
	require.NoError(t, err)
	assert.Nil(t, cfg.Proxy)
	assert.Zero(t, cfg.QPS, "client-go's default")
}

// writeClientCert writes a self-signed client certificate and its key.
func writeClientCert(t *testing.T, dir string) (*x509.Certificate, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "system:node:gpu-node-1", Organization: []string{"system:nodes"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return cert, certFile, keyFile
}

// Get reads one object, cluster-scoped or namespaced, into its Go type.
func TestGetReadsOneObject(t *testing.T) {
	s := startSim(t, nil)
	node, _ := s.nodes(t)
	require.NoError(t, s.api.Store().Apply(newPod(node, "vllm-0")))
	client, err := NewClient(s.kubeconfig(t))
	require.NoError(t, err)
	ctx := context.Background()

	n := &corev1.Node{}
	require.NoError(t, client.Get(ctx, Nodes.GroupVersionResource(), "", node, n))
	assert.Equal(t, node, n.Name)
	p := &corev1.Pod{}
	require.NoError(t, client.Get(ctx, Pods.GroupVersionResource(), "serve", "vllm-0", p))
	assert.Equal(t, node, p.Spec.NodeName)
	err = client.Get(ctx, Pods.GroupVersionResource(), "serve", "absent", p)
	assert.True(t, apierrors.IsNotFound(err), "%v", err)
}
