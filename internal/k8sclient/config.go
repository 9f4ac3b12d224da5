// Package k8sclient is the collector's one way to the Kubernetes API: how
// to reach and authenticate to it (APIConfig, with the auth_type values of
// contrib's k8sconfig), and the informers every component on a node shares,
// so that an agent opens one watch per object kind however many of its
// components read pods, nodes or DRA objects (Registry).
package k8sclient // import "github.com/otelcol-accel/otelcol-accel/internal/k8sclient"

import (
	"errors"
	"fmt"
)

// AuthType is how the collector authenticates to the API server. The values
// and their meaning are contrib's (internal/k8sconfig), so a configuration
// written for k8sattributes means the same here.
type AuthType string

const (
	// AuthServiceAccount is the pod's service account: the in-cluster API
	// address, the mounted token, and the mounted cluster CA.
	AuthServiceAccount AuthType = "serviceAccount"
	// AuthKubeConfig reads a kubeconfig file, as kubectl does.
	AuthKubeConfig AuthType = "kubeConfig"
	// AuthNone sends no credentials to the in-cluster API address and does
	// not verify the server's certificate: for API servers (or proxies in
	// front of them) that allow anonymous reads, and for tests.
	AuthNone AuthType = "none"
	// AuthTLS presents a client certificate (cert_file, key_file) to the
	// in-cluster API address and verifies the server against ca_file.
	AuthTLS AuthType = "tls"
)

// APIConfig says how to reach the API server. Components embed it with
// `mapstructure:",squash"`, so its keys sit beside their own.
type APIConfig struct {
	AuthType AuthType `mapstructure:"auth_type"`
	// KubeConfig is the kubeconfig file for auth_type kubeConfig; empty
	// means the usual lookup ($KUBECONFIG, then ~/.kube/config).
	KubeConfig string `mapstructure:"kubeconfig"`
	// Context selects a kubeconfig context; empty means the current one.
	Context string `mapstructure:"context"`
	// CAFile, CertFile and KeyFile are the PEM files of auth_type tls (the
	// same keys as kubeletstats' tls). An empty CAFile trusts the system's
	// roots; in a pod the cluster CA is
	// /var/run/secrets/kubernetes.io/serviceaccount/ca.crt.
	CAFile   string `mapstructure:"ca_file"`
	CertFile string `mapstructure:"cert_file"`
	KeyFile  string `mapstructure:"key_file"`
	// QPS and Burst limit the client's requests; zero keeps client-go's
	// defaults (5 and 10; with QPS set, a zero Burst is 10 or QPS rounded
	// up, whichever is more). One client, and when QPS is set one rate
	// limiter, serves every component of the agent.
	QPS   float32 `mapstructure:"kube_api_qps"`
	Burst int     `mapstructure:"kube_api_burst"`
}

const authTypes = "serviceAccount, kubeConfig, none or tls"

// Check checks the shape of the config: a known auth type, the files it
// needs named, and no settings it would ignore. Whether the files exist or
// the API answers is known only at start. Components call it from their
// Validate when their Kubernetes source is on; it is not a Validate method
// itself because the collector calls those on every embedded struct, so a
// component with the API turned off would be refused for it, and one with
// it on would get the same message once per embedding.
func (c APIConfig) Check() error {
	var errs []error
	switch c.AuthType {
	case AuthServiceAccount, AuthKubeConfig, AuthNone, AuthTLS:
	case "":
		errs = append(errs, errors.New("auth_type is empty: use "+authTypes))
	default:
		errs = append(errs, fmt.Errorf("auth_type %q is not one of %s", c.AuthType, authTypes))
	}
	if c.AuthType == AuthTLS {
		if c.CertFile == "" || c.KeyFile == "" {
			errs = append(errs, errors.New("auth_type tls needs cert_file and key_file (the client certificate and its key)"))
		}
	} else if c.CAFile != "" || c.CertFile != "" || c.KeyFile != "" {
		errs = append(errs, fmt.Errorf("ca_file, cert_file and key_file are read only with auth_type tls, not %q", c.AuthType))
	}
	if c.AuthType != AuthKubeConfig && (c.KubeConfig != "" || c.Context != "") {
		errs = append(errs, fmt.Errorf("kubeconfig and context are read only with auth_type kubeConfig, not %q", c.AuthType))
	}
	if c.QPS < 0 || c.Burst < 0 {
		errs = append(errs, errors.New("kube_api_qps and kube_api_burst must not be negative (0 keeps client-go's defaults)"))
	}
	return errors.Join(errs...)
}
