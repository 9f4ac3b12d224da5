package discovery

import (
	"errors"
	"fmt"
	"net"
	"os"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Authentication to the Kubernetes API, as contrib's k8sconfig names it.
const (
	AuthServiceAccount = "serviceAccount"
	AuthKubeConfig     = "kubeConfig"
	AuthNone           = "none"
)

// APIConfig says how to reach the Kubernetes API.
type APIConfig struct {
	// AuthType is serviceAccount (in cluster), kubeConfig or none.
	AuthType string `mapstructure:"auth_type"`
	// KubeConfig is the kubeconfig file for kubeConfig; empty means the
	// usual lookup ($KUBECONFIG, then ~/.kube/config).
	KubeConfig string `mapstructure:"kubeconfig"`
	// Context selects a kubeconfig context; empty means the current one.
	Context string `mapstructure:"context"`
}

// Check checks the auth type. (Not Validate: the collector would call that
// even when discovery is off.)
func (c APIConfig) Check() error {
	switch c.AuthType {
	case AuthServiceAccount, AuthKubeConfig, AuthNone:
		return nil
	}
	return fmt.Errorf("auth_type %q: use %s, %s or %s", c.AuthType, AuthServiceAccount, AuthKubeConfig, AuthNone)
}

// RestConfig builds the client configuration for c.
func (c APIConfig) RestConfig() (*rest.Config, error) {
	switch c.AuthType {
	case AuthServiceAccount:
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster Kubernetes config (auth_type %s): %w", AuthServiceAccount, err)
		}
		return cfg, nil
	case AuthKubeConfig:
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		if c.KubeConfig != "" {
			rules.ExplicitPath = c.KubeConfig
		}
		overrides := &clientcmd.ConfigOverrides{CurrentContext: c.Context}
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %q: %w", c.KubeConfig, err)
		}
		return cfg, nil
	case AuthNone:
		host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
		if host == "" || port == "" {
			return nil, errors.New("auth_type none needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT")
		}
		return &rest.Config{
			Host:            "https://" + net.JoinHostPort(host, port),
			TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		}, nil
	}
	return nil, c.Check()
}

// NewClientset connects to the Kubernetes API as c says.
func NewClientset(c APIConfig) (kubernetes.Interface, error) {
	cfg, err := c.RestConfig()
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "otelcol-accel/inference-receiver"
	return kubernetes.NewForConfig(cfg)
}
