package manifests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// generatedConfigMap is a ConfigMap whose data are collector config files
// from distributions/otelcol-accel/config, written into a kustomize root
// (kustomize cannot read files outside it).
type generatedConfigMap struct {
	path  string // relative to kubernetes/
	name  string
	files []string // config file names, in order
}

var generatedConfigMaps = []generatedConfigMap{
	{"base/configmaps.yaml", "otelcol-accel-agent", []string{"agent.yaml", "agent-to-gateway.yaml"}},
	{"base/configmaps.yaml", "otelcol-accel-gateway", []string{"gateway.yaml"}},
	{"overlays/eks-cloudwatch-emf/gateway-config.yaml", "otelcol-accel-gateway", []string{"cloudwatch-emf.yaml"}},
	{"overlays/eks-cloudwatch-otlp/gateway-config.yaml", "otelcol-accel-gateway", []string{"cloudwatch-otlp.yaml"}},
	{"overlays/remediation/gateway-config.yaml", "otelcol-accel-gateway", []string{"remediation.yaml"}},
	{"overlays/reliability/gateway-config.yaml", "otelcol-accel-gateway", []string{"gateway.yaml", "k8s-reliability.yaml"}},
	{"examples/sidecar-config.yaml", "otelcol-accel-sidecar", []string{"sidecar.yaml"}},
}

const generatedHeader = "# Generated from distributions/otelcol-accel/config by `make manifests`; do not edit.\n"

// renderConfigMaps returns the content each generated file must have.
func renderConfigMaps() (map[string][]byte, error) {
	out := map[string]*bytes.Buffer{}
	var order []string
	for _, g := range generatedConfigMaps {
		cm := corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{
				Name:      g.name,
				Namespace: "otelcol-accel",
				Labels:    map[string]string{"app.kubernetes.io/part-of": "otelcol-accel"},
			},
			Data: map[string]string{},
		}
		for _, f := range g.files {
			raw, err := os.ReadFile(filepath.Join(configDir(), f))
			if err != nil {
				return nil, fmt.Errorf("config file for ConfigMap %s: %w", g.name, err)
			}
			cm.Data[f] = string(raw)
		}
		doc, err := yaml.Marshal(cm)
		if err != nil {
			return nil, err
		}
		buf, ok := out[g.path]
		if !ok {
			buf = bytes.NewBufferString(generatedHeader)
			out[g.path] = buf
			order = append(order, g.path)
		} else {
			buf.WriteString("---\n")
		}
		buf.Write(doc)
	}
	files := map[string][]byte{}
	for _, p := range order {
		files[p] = out[p].Bytes()
	}
	return files, nil
}
