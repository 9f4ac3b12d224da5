package manifests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// envDefault resolves "${env:NAME:-default}" to its default, the value the
// collector uses unless the manifest sets NAME.
var envRef = regexp.MustCompile(`\$\{env:([A-Za-z0-9_]+)(?::-([^}]*))?\}`)

func resolve(value string, env map[string]string) string {
	return envRef.ReplaceAllStringFunc(value, func(m string) string {
		parts := envRef.FindStringSubmatch(m)
		if v, ok := env[parts[1]]; ok {
			return v
		}
		return parts[2]
	})
}

// loadConfig parses a collector config file into a generic tree.
func loadConfig(name string) (map[string]any, error) {
	raw, err := os.ReadFile(filepath.Join(configDir(), name))
	if err != nil {
		return nil, err
	}
	return parseConfig(name, string(raw))
}

// parseConfig parses a collector config's text into a generic tree.
func parseConfig(name, raw string) (map[string]any, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(raw), &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cfg, nil
}

// lookup walks a config tree along dotted keys; component keys such as
// "dcgm" also match "dcgm/<name>".
func lookup(tree any, path ...string) (any, bool) {
	cur := tree
	for _, key := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		next, ok := m[key]
		if !ok {
			for k, v := range m {
				if strings.HasPrefix(k, key+"/") {
					next, ok = v, true
					break
				}
			}
		}
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func containerEnv(c corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		} else {
			env[e.Name] = "<from " + e.Name + ">"
		}
	}
	return env
}

func findContainer(spec corev1.PodSpec, name string) (corev1.Container, bool) {
	for _, c := range spec.Containers {
		if c.Name == name {
			return c, true
		}
	}
	return corev1.Container{}, false
}

// mountFor returns the volume mounted at dir or a parent of it.
func mountFor(c corev1.Container, dir string) (corev1.VolumeMount, bool) {
	best := corev1.VolumeMount{}
	found := false
	for _, m := range c.VolumeMounts {
		if dir == m.MountPath || strings.HasPrefix(dir, strings.TrimSuffix(m.MountPath, "/")+"/") {
			if !found || len(m.MountPath) > len(best.MountPath) {
				best, found = m, true
			}
		}
	}
	return best, found
}

func volume(spec corev1.PodSpec, name string) (corev1.Volume, bool) {
	for _, v := range spec.Volumes {
		if v.Name == name {
			return v, true
		}
	}
	return corev1.Volume{}, false
}

func configArgs(c corev1.Container) []string {
	var files []string
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		if f, ok := strings.CutPrefix(a, "--config="); ok {
			files = append(files, f)
		}
	}
	return files
}

func podSpecs(daemonSets []*appsv1.DaemonSet, deployments []*appsv1.Deployment) map[string]corev1.PodSpec {
	out := map[string]corev1.PodSpec{}
	for _, d := range daemonSets {
		out["DaemonSet/"+d.Name] = d.Spec.Template.Spec
	}
	for _, d := range deployments {
		out["Deployment/"+d.Name] = d.Spec.Template.Spec
	}
	return out
}
