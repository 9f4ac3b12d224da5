package k8sclient

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// userAgent names the collector, not a component: one client serves them all.
const userAgent = "otelcol-accel"

// RestConfig builds the client-go configuration c describes.
func (c APIConfig) RestConfig() (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	switch c.AuthType {
	case AuthKubeConfig:
		cfg, err = c.kubeconfig()
	case AuthServiceAccount:
		cfg, err = rest.InClusterConfig()
		if err != nil {
			err = fmt.Errorf("auth_type serviceAccount needs to run in a pod (KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT and the mounted service account token): %w", err)
		}
	case AuthNone:
		cfg, err = inCluster(c.AuthType)
		if err == nil {
			cfg.Insecure = true
		}
	case AuthTLS:
		cfg, err = inCluster(c.AuthType)
		if err == nil {
			cfg.CertFile, cfg.KeyFile, cfg.CAFile = c.CertFile, c.KeyFile, c.CAFile
		}
	default:
		err = c.Check()
	}
	if err != nil {
		return nil, err
	}
	if c.AuthType != AuthKubeConfig {
		// The in-cluster API is reached directly, never through the
		// process's HTTP(S)_PROXY (a kubeconfig says its own proxy-url).
		cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	}
	if c.QPS > 0 {
		cfg.QPS = c.QPS
	}
	if c.Burst > 0 {
		cfg.Burst = c.Burst
	}
	cfg.UserAgent = userAgent
	return cfg, nil
}

func (c APIConfig) kubeconfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.KubeConfig != "" {
		rules.ExplicitPath = c.KubeConfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: c.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("auth_type kubeConfig: kubeconfig %q: %w", c.KubeConfig, err)
	}
	return cfg, nil
}

// inCluster is the API address a pod is given, with nothing else.
func inCluster(auth AuthType) (*rest.Config, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("auth_type " + string(auth) + " needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT (set in every pod); outside a cluster use auth_type kubeConfig")
	}
	return &rest.Config{Host: "https://" + net.JoinHostPort(host, port)}, nil
}
