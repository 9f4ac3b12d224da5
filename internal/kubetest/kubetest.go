// Package kubetest starts a real kube-apiserver (with etcd) on loopback for
// tests: the real REST semantics (status subresource, conflicts, the
// Eviction API and its PodDisruptionBudget check, DRA) and the real RBAC
// authorizer, so a test can prove that a shipped ClusterRole allows what a
// component does and that nothing less would.
//
// The binary is built by `make tools` from internal/tools/kube-apiserver
// into the tool cache; etcd is Debian's etcd-server. No kubelet, scheduler
// or controller-manager runs: pods stay Pending and PDB status is whatever
// the test writes.
package kubetest // import "github.com/otelcol-accel/otelcol-accel/internal/kubetest"

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Version is the kube-apiserver the Makefile builds (internal/tools/kube-apiserver).
const Version = "v1.37.2"

// Env names: where the binaries are, and whether their absence fails a
// test (the Makefile sets it, so CI never skips silently).
const (
	EnvBinary  = "KUBE_APISERVER_BIN"
	EnvEtcd    = "ETCD_BIN"
	EnvRequire = "OTELCOL_ACCEL_REQUIRE_KUBE_APISERVER"
)

// Binaries finds kube-apiserver and etcd. The error says how to get them.
func Binaries() (apiserver, etcd string, err error) {
	apiserver = os.Getenv(EnvBinary)
	if apiserver == "" {
		home, _ := os.UserHomeDir()
		apiserver = filepath.Join(home, ".cache", "otelcol-accel", "tools", "kube-apiserver-"+Version)
	}
	if _, serr := os.Stat(apiserver); serr != nil {
		err = fmt.Errorf("kube-apiserver not found at %s: run `make tools` (builds it from internal/tools/kube-apiserver) or set %s", apiserver, EnvBinary)
	}
	etcd = os.Getenv(EnvEtcd)
	if etcd == "" {
		etcd = "/usr/bin/etcd"
	}
	if _, serr := os.Stat(etcd); serr != nil {
		err = errors.Join(err, fmt.Errorf("etcd not found at %s: install Debian's etcd-server (scripts/install-debian-deps.sh) or set %s", etcd, EnvEtcd))
	}
	return apiserver, etcd, err
}

// Required reports whether a missing binary must fail rather than skip.
func Required() bool { return os.Getenv(EnvRequire) != "" }

// Identity is a user the token file knows.
type Identity struct {
	Name   string
	Groups []string
	Token  string
}

// ServiceAccount returns the identity the API server gives a service
// account's token.
func ServiceAccount(namespace, name string) Identity {
	return Identity{
		Name:   "system:serviceaccount:" + namespace + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
}

// Server is a running etcd and kube-apiserver.
type Server struct {
	// Host is the API server's https URL.
	Host string
	CA   []byte

	dir        string
	apiserver  string
	etcdURL    string
	port       int
	identities map[string]Identity
	admin      Identity

	mu   sync.Mutex
	etcd *exec.Cmd
	api  *exec.Cmd
	logs *os.File
}

// Start starts etcd and the API server in dir with the given identities
// (besides an admin in system:masters) and waits until /readyz passes.
func Start(ctx context.Context, dir string, ids ...Identity) (*Server, error) {
	apiserver, etcd, err := Binaries()
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, apiserver: apiserver, identities: map[string]Identity{}}
	s.admin = Identity{Name: "kubetest-admin", Groups: []string{"system:masters"}, Token: token()}
	for _, id := range ids {
		id.Token = token()
		s.identities[id.Name] = id
	}
	logs, err := os.Create(filepath.Join(dir, "servers.log"))
	if err != nil {
		return nil, err
	}
	s.logs = logs
	if err := s.writeFiles(); err != nil {
		return nil, err
	}
	clientPort, peerPort, apiPort := freePort(), freePort(), freePort()
	s.port = apiPort
	s.etcdURL = "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	s.etcd = exec.Command(etcd, "--name=kubetest", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+s.etcdURL, "--advertise-client-urls="+s.etcdURL,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer,
		"--initial-cluster=kubetest="+peer)
	s.etcd.Stdout, s.etcd.Stderr, s.etcd.SysProcAttr = logs, logs, procAttr()
	if err := s.etcd.Start(); err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	if err := s.startAPIServer(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (s *Server) writeFiles() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(filepath.Join(s.dir, "sa.key"), keyPEM, 0o600); err != nil {
		return err
	}
	var b strings.Builder
	for _, id := range append([]Identity{s.admin}, s.all()...) {
		fmt.Fprintf(&b, "%s,%s,%s,\"%s\"\n", id.Token, id.Name, id.Name, strings.Join(id.Groups, ","))
	}
	return os.WriteFile(filepath.Join(s.dir, "tokens.csv"), []byte(b.String()), 0o600)
}

func (s *Server) all() []Identity {
	out := make([]Identity, 0, len(s.identities))
	for _, id := range s.identities {
		out = append(out, id)
	}
	return out
}

func (s *Server) startAPIServer(ctx context.Context) error {
	certs := filepath.Join(s.dir, "certs")
	cmd := exec.Command(s.apiserver,
		"--etcd-servers="+s.etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		// The kubernetes Service endpoint may not be a loopback address;
		// nothing here resolves it anyway.
		"--endpoint-reconciler-type=none",
		"--secure-port="+strconv.Itoa(s.port),
		"--cert-dir="+certs,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+filepath.Join(s.dir, "sa.key"),
		"--service-account-signing-key-file="+filepath.Join(s.dir, "sa.key"),
		"--token-auth-file="+filepath.Join(s.dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.96.0.0/16",
		// No controller-manager creates the default ServiceAccount that
		// this admission plugin wants for every pod.
		"--disable-admission-plugins=ServiceAccount",
	)
	cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = s.logs, s.logs, procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	s.mu.Lock()
	s.api = cmd
	s.mu.Unlock()
	s.Host = "https://127.0.0.1:" + strconv.Itoa(s.port)

	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("kube-apiserver exited (%v); its log: %s", err, s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready: %w; its log: %s", ctx.Err(), s.logTail())
		case <-time.After(500 * time.Millisecond):
		}
		ca, err := os.ReadFile(filepath.Join(certs, "apiserver.crt"))
		if err != nil {
			continue
		}
		s.CA = ca
		cs, err := kubernetes.NewForConfig(s.config(s.admin.Token))
		if err != nil {
			return err
		}
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && strings.TrimSpace(string(body)) == "ok" {
			return nil
		}
	}
}

func (s *Server) logTail() string {
	data, _ := os.ReadFile(s.logs.Name())
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

func (s *Server) config(tok string) *rest.Config {
	return &rest.Config{
		Host:            s.Host,
		BearerToken:     tok,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.CA},
		QPS:             1000,
		Burst:           1000,
	}
}

// Config is a client configuration for the named identity ("" for the
// admin).
func (s *Server) Config(identity string) *rest.Config {
	if identity == "" {
		return s.config(s.admin.Token)
	}
	id, ok := s.identities[identity]
	if !ok {
		panic("kubetest: unknown identity " + identity)
	}
	return s.config(id.Token)
}

// Client is a clientset for the named identity ("" for the admin).
func (s *Server) Client(identity string) kubernetes.Interface {
	cs, err := kubernetes.NewForConfig(s.Config(identity))
	if err != nil {
		panic(err)
	}
	return cs
}

// Kubeconfig writes a kubeconfig file for the identity and returns its
// path (for components configured with auth_type kubeConfig).
func (s *Server) Kubeconfig(identity string) (string, error) {
	cfg := s.Config(identity)
	caFile := filepath.Join(s.dir, "ca.crt")
	if err := os.WriteFile(caFile, s.CA, 0o600); err != nil {
		return "", err
	}
	name := strings.NewReplacer(":", "-", "/", "-").Replace(identity)
	if name == "" {
		name = "admin"
	}
	path := filepath.Join(s.dir, "kubeconfig-"+name)
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubetest
  cluster: {server: %q, certificate-authority: %q}
users:
- name: %s
  user: {token: %q}
contexts:
- name: kubetest
  context: {cluster: kubetest, user: %s}
current-context: kubetest
`, cfg.Host, caFile, name, cfg.BearerToken, name)
	return path, os.WriteFile(path, []byte(doc), 0o600)
}

// RestartAPIServer stops the API server and starts it again on the same
// port with the same etcd (clients keep their configuration).
func (s *Server) RestartAPIServer(ctx context.Context) error {
	s.stopAPIServer()
	return s.startAPIServer(ctx)
}

// StopAPIServer stops only the API server (etcd keeps the state).
func (s *Server) StopAPIServer() { s.stopAPIServer() }

// StartAPIServer starts it again after StopAPIServer.
func (s *Server) StartAPIServer(ctx context.Context) error { return s.startAPIServer(ctx) }

func (s *Server) stopAPIServer() {
	s.mu.Lock()
	cmd := s.api
	s.api = nil
	s.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
		for range 100 { // wait for the port to be released
			if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.port)); err == nil {
				c.Close()
				time.Sleep(50 * time.Millisecond)
				continue
			}
			break
		}
	}
}

// Stop stops the API server and etcd.
func (s *Server) Stop() {
	s.stopAPIServer()
	if s.etcd != nil && s.etcd.Process != nil {
		_ = s.etcd.Process.Kill()
		_ = s.etcd.Wait()
	}
	if s.logs != nil {
		s.logs.Close()
	}
}
