package manifests

import (
	"fmt"
	"os"
	"path/filepath"
)

// chartConfigs are the collector configs the chart's ConfigMaps carry,
// copied byte for byte from distributions/otelcol-accel/config into the
// chart's files/ (Helm reads no file outside the chart).
var chartConfigs = []string{
	"agent.yaml", "agent-to-gateway.yaml",
	"gateway.yaml", "otlp.yaml", "cloudwatch-emf.yaml", "cloudwatch-otlp.yaml", "amp.yaml",
	"insights.yaml", "remediation.yaml",
}

// chartFiles returns what each file under the chart's files/ must hold.
func chartFiles() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range chartConfigs {
		raw, err := os.ReadFile(filepath.Join(configDir(), f))
		if err != nil {
			return nil, fmt.Errorf("config file for the chart: %w", err)
		}
		out[f] = raw
	}
	// The alert rules as a PrometheusRule (prometheusRule.enabled).
	raw, err := os.ReadFile(filepath.Join(distDir(), "alerts", "prometheusrule.yaml"))
	if err != nil {
		return nil, fmt.Errorf("alert rules for the chart: %w", err)
	}
	out["prometheusrule.yaml"] = raw
	return out, nil
}
