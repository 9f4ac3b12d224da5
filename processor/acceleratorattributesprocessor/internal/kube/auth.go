// Package kube watches the Kubernetes API for what PodResources does not
// say: pod labels, annotations, owners and UIDs, this node's labels, and DRA
// ResourceClaims and ResourceSlices. Every watch is limited to this node
// where the API allows it (pods, the node, slices); ResourceClaims cannot be
// filtered by node, so they are watched cluster-wide and kept only when a pod
// of this node holds them.
package kube

import (
	"errors"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// AuthType is how the collector authenticates to the API server, as in the
// contrib k8sattributes processor.
type AuthType string

const (
	// AuthServiceAccount uses the pod's service account (in-cluster).
	AuthServiceAccount AuthType = "serviceAccount"
	// AuthKubeConfig uses a kubeconfig file (the simulator writes one).
	AuthKubeConfig AuthType = "kubeConfig"
	// AuthNone talks to the in-cluster API server without credentials.
	AuthNone AuthType = "none"
)

// APIConfig says how to reach the API server.
type APIConfig struct {
	AuthType AuthType `mapstructure:"auth_type"`
	// KubeConfig is the kubeconfig path for auth_type kubeConfig; empty means
	// $KUBECONFIG, then ~/.kube/config.
	KubeConfig string `mapstructure:"kubeconfig"`
	// Context selects a kubeconfig context; empty means the current one.
	Context string `mapstructure:"context"`
}

// Validate checks the auth type.
func (c APIConfig) Validate() error {
	switch c.AuthType {
	case AuthServiceAccount, AuthKubeConfig, AuthNone:
		return nil
	case "":
		return errors.New("auth_type is empty: use serviceAccount, kubeConfig or none")
	default:
		return fmt.Errorf("auth_type %q is not one of serviceAccount, kubeConfig, none", c.AuthType)
	}
}

const userAgent = "otelcol-accel/accelerator_attributes"

// NewClientset builds a clientset from the config.
func NewClientset(c APIConfig) (kubernetes.Interface, error) {
	var cfg *rest.Config
	var err error
	switch c.AuthType {
	case AuthKubeConfig:
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		if c.KubeConfig != "" {
			rules.ExplicitPath = c.KubeConfig
		}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
			&clientcmd.ConfigOverrides{CurrentContext: c.Context}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %q: %w", c.KubeConfig, err)
		}
	case AuthServiceAccount, AuthNone:
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("auth_type %s needs to run in a pod (KUBERNETES_SERVICE_HOST and the service account token): %w", c.AuthType, err)
		}
		if c.AuthType == AuthNone {
			cfg.BearerToken, cfg.BearerTokenFile = "", ""
		}
	default:
		return nil, c.Validate()
	}
	cfg.UserAgent = userAgent
	return kubernetes.NewForConfig(cfg)
}
