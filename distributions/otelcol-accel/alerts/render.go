package alerts

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// Generated files, relative to this directory.
const (
	RulesFile          = "otelcol-accel.rules.yaml"
	PrometheusRuleFile = "prometheusrule.yaml"
)

const header = "# Generated from distributions/otelcol-accel/alerts/rules.go by `make manifests`; do not edit.\n"

// RulesYAML is the plain Prometheus rules file (rule_files: in prometheus.yml).
func RulesYAML() ([]byte, error) {
	return marshal(map[string]any{"groups": Groups()})
}

// PrometheusRuleYAML is the same groups as a Prometheus Operator
// PrometheusRule.
func PrometheusRuleYAML() ([]byte, error) {
	type meta struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace"`
		Labels    map[string]string `yaml:"labels"`
	}
	return marshal(struct {
		APIVersion string         `yaml:"apiVersion"`
		Kind       string         `yaml:"kind"`
		Metadata   meta           `yaml:"metadata"`
		Spec       map[string]any `yaml:"spec"`
	}{
		APIVersion: "monitoring.coreos.com/v1",
		Kind:       "PrometheusRule",
		Metadata: meta{
			Name:      "otelcol-accel",
			Namespace: "otelcol-accel",
			Labels:    map[string]string{"app.kubernetes.io/part-of": "otelcol-accel"},
		},
		Spec: map[string]any{"groups": Groups()},
	})
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(header)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
