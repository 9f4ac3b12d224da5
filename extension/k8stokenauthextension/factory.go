package k8stokenauthextension

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/otelcol-accel/otelcol-accel/extension/k8stokenauthextension/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
)

// DefaultTokenFile is where the shipped manifests project the agents'
// gateway token.
const DefaultTokenFile = "/var/run/secrets/otelcol-accel/gateway-token/token"

// NewFactory returns the k8s_token_auth extension's factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{
		TokenFile:       DefaultTokenFile,
		RefreshInterval: time.Minute,
		Audiences:       []string{DefaultAudience},
		CacheTTL:        time.Minute,
		Kubernetes:      k8sclient.APIConfig{AuthType: k8sclient.AuthServiceAccount},
	}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newAuth(cfg.(*Config), set)
}
