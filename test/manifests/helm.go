package manifests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/runtime"
)

func chartDir() string { return filepath.Join(distDir(), "helm", "otelcol-accel") }

// helmRelease is how the tests install the chart: the release and namespace
// the kustomize base uses, so object names compare one to one.
var helmRelease = chartutil.ReleaseOptions{Name: "otelcol-accel", Namespace: "otelcol-accel", IsInstall: true, Revision: 1}

// renderHelm renders the chart with the real Helm engine, as `helm install`
// would with these values files (later ones override earlier ones) and
// --set values, and decodes every object strictly: client-go types, and the
// Prometheus Operator's kinds into structs that reject unknown fields.
func renderHelm(valueFiles []string, set map[string]any) ([]runtime.Object, []operatorObject, error) {
	manifests, err := renderHelmManifests(valueFiles, set)
	if err != nil {
		return nil, nil, err
	}
	var objs []runtime.Object
	var operator []operatorObject
	names := make([]string, 0, len(manifests))
	for name := range manifests {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for i, doc := range splitYAML(manifests[name]) {
			var head struct {
				APIVersion string `yaml:"apiVersion"`
				Kind       string `yaml:"kind"`
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				return nil, nil, fmt.Errorf("%s document %d: %w", name, i+1, err)
			}
			if strings.HasPrefix(head.APIVersion, "monitoring.coreos.com/") {
				o, err := decodeOperatorObject(doc)
				if err != nil {
					return nil, nil, fmt.Errorf("%s document %d: %w", name, i+1, err)
				}
				operator = append(operator, o)
				continue
			}
			obj, _, err := strictDecoder.Decode(doc, nil, nil)
			if err != nil {
				return nil, nil, fmt.Errorf("%s document %d (%s): %w", name, i+1, head.Kind, err)
			}
			objs = append(objs, obj)
		}
	}
	return objs, operator, nil
}

func helmValues(valueFiles []string, set map[string]any) (map[string]any, error) {
	vals := map[string]any{}
	for _, f := range valueFiles {
		v, err := chartutil.ReadValuesFile(f)
		if err != nil {
			return nil, err
		}
		vals = chartutil.CoalesceTables(v.AsMap(), vals)
	}
	for k, v := range set {
		if err := setPath(vals, strings.Split(k, "."), v); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

func setPath(m map[string]any, path []string, v any) error {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
	return nil
}

func renderHelmManifests(valueFiles []string, set map[string]any) (map[string]string, error) {
	chrt, err := loader.Load(chartDir())
	if err != nil {
		return nil, err
	}
	vals, err := helmValues(valueFiles, set)
	if err != nil {
		return nil, err
	}
	top, err := chartutil.ToRenderValues(chrt, vals, helmRelease, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(chrt, top)
	if err != nil {
		return nil, err
	}
	for name := range out {
		if !strings.HasSuffix(name, ".yaml") || strings.TrimSpace(out[name]) == "" {
			delete(out, name)
		}
	}
	return out, nil
}

// splitYAML splits a rendered template into its non-empty documents.
func splitYAML(s string) [][]byte {
	var docs [][]byte
	for _, d := range strings.Split("\n"+s, "\n---") {
		// Trailing space is kept: it ends the last block scalar.
		b := bytes.TrimLeft([]byte(d), " \n")
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		// A document of comments only is no object.
		content := false
		for _, line := range strings.Split(string(b), "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				content = true
				break
			}
		}
		if content {
			// The split took the line break that ended the last line.
			docs = append(docs, append(b, '\n'))
		}
	}
	return docs
}

// operatorObject is a Prometheus Operator object: client-go has no types for
// them, so the fields the chart writes are declared here and nothing else is
// accepted.
type operatorObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace"`
		Labels    map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		// PodMonitor
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		PodMetricsEndpoints []struct {
			Port     string `yaml:"port"`
			Interval string `yaml:"interval"`
		} `yaml:"podMetricsEndpoints"`
		// PrometheusRule
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Record      string            `yaml:"record"`
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	} `yaml:"spec"`
}

func decodeOperatorObject(doc []byte) (operatorObject, error) {
	var o operatorObject
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&o); err != nil {
		return o, err
	}
	switch o.Kind {
	case "PodMonitor", "PrometheusRule":
	default:
		return o, fmt.Errorf("unexpected %s %s", o.APIVersion, o.Kind)
	}
	return o, nil
}

// helmExamples are the values files users start from.
func helmExamples() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(chartDir(), "examples", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, os.ErrNotExist
	}
	return files, nil
}
