package manifests

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The Helm chart and the kustomize overlays are two ways to deploy the same
// thing: for each overlay, the chart with the matching values must run the
// same images with the same arguments, configs, environment, mounts, ports,
// probes, placement and RBAC.
var driftPairs = []struct {
	kustomize string
	set       map[string]any
	// Why the Services' annotations may differ, if they may.
	serviceAnnotations string
}{
	{"overlays/prometheus", map[string]any{"destination": "prometheus"}, ""},
	{"overlays/eks-cloudwatch-emf", map[string]any{"region": "us-east-1", "destination": "cloudwatch-emf",
		"serviceAccount.annotations": map[string]any{"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/otelcol-accel"}}, ""},
	{"overlays/eks-cloudwatch-otlp", map[string]any{"region": "us-east-1", "destination": "cloudwatch-otlp",
		"serviceAccount.annotations": map[string]any{"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/otelcol-accel"}}, ""},
	// The remediation overlay is the base (the Prometheus gateway) with the
	// remediator; the chart's mode default is recommend, the layer's approve.
	{"overlays/remediation", map[string]any{"destination": "prometheus", "remediation.enabled": true, "remediation.mode": "recommend"},
		"the overlay is on the base, whose gateway Service has no scrape annotations; the chart's prometheus destination always adds them (overlays/prometheus is compared with them)"},
}

func TestHelmAndKustomizeDoNotDrift(t *testing.T) {
	defaults := configEnvDefaults(t)
	for _, p := range driftPairs {
		t.Run(p.kustomize, func(t *testing.T) {
			kObjs, err := render(p.kustomize)
			if err != nil {
				t.Fatal(err)
			}
			hObjs, _, err := renderHelm(nil, p.set)
			if err != nil {
				t.Fatal(err)
			}
			k, h := sortObjects(p.kustomize, kObjs), sortObjects("helm", hObjs)
			kSpecs, hSpecs := podSpecs(k.daemonSets, k.deployments), podSpecs(h.daemonSets, h.deployments)
			if !reflect.DeepEqual(keys(kSpecs), keys(hSpecs)) {
				t.Fatalf("workloads: kustomize %v, helm %v", keys(kSpecs), keys(hSpecs))
			}
			for name, ks := range kSpecs {
				comparePodSpecs(t, name, ks, hSpecs[name], k, h, defaults)
			}
			if got, want := clusterRules(h), clusterRules(k); got != want {
				t.Errorf("RBAC: helm grants %s, kustomize %s", got, want)
			}
			if got, want := roleRules(h), roleRules(k); got != want {
				t.Errorf("namespaced RBAC: helm grants %s, kustomize %s", got, want)
			}
			if got, want := js(h.bindings), js(k.bindings); got != want {
				t.Errorf("role bindings: helm %s, kustomize %s", got, want)
			}
			if got, want := accounts(h), accounts(k); got != want {
				t.Errorf("service accounts: helm %s, kustomize %s", got, want)
			}
			compareServices(t, k, h, p.serviceAnnotations != "")
			if kc, hc := k.configMaps["otelcol-accel-neuron-monitor"], h.configMaps["otelcol-accel-neuron-monitor"]; kc == nil || hc == nil ||
				!reflect.DeepEqual(kc.Data, hc.Data) {
				t.Errorf("the neuron-monitor config differs:\n kustomize %s\n helm      %s", js(kc), js(hc))
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func comparePodSpecs(t *testing.T, name string, ks, hs corev1.PodSpec, k, h rendered, defaults map[string]string) {
	t.Helper()
	same := func(what string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s %s differs:\n kustomize %s\n helm      %s", name, what, js(a), js(b))
		}
	}
	same("hostPID", ks.HostPID, hs.HostPID)
	same("service account", ks.ServiceAccountName, hs.ServiceAccountName)
	same("priority class", ks.PriorityClassName, hs.PriorityClassName)
	same("affinity", ks.Affinity, hs.Affinity)
	same("tolerations", ks.Tolerations, hs.Tolerations)
	same("pod security context", ks.SecurityContext, hs.SecurityContext)
	same("volumes", ks.Volumes, hs.Volumes)
	same("init containers", ks.InitContainers, hs.InitContainers)
	if len(ks.Containers) != len(hs.Containers) {
		t.Fatalf("%s: %d containers in kustomize, %d in helm", name, len(ks.Containers), len(hs.Containers))
	}
	for i := range ks.Containers {
		kc, hc := ks.Containers[i], hs.Containers[i]
		where := name + " container " + kc.Name
		compareEnv(t, where, kc.Env, hc.Env, defaults)
		kc.Env, hc.Env = nil, nil
		same("container "+kc.Name+" (image, args, ports, mounts, probes, resources)", kc, hc)
		// The config files it loads hold the same bytes.
		for _, f := range configArgs(ks.Containers[i]) {
			file := path.Base(f)
			kd, hd := configMapFor(ks, k, f, file), configMapFor(hs, h, f, file)
			if kd == "" || kd != hd {
				t.Errorf("%s: config %s differs between the ConfigMaps (or is missing)", where, file)
			}
		}
	}
}

func configMapFor(spec corev1.PodSpec, r rendered, arg, file string) string {
	c, _ := findContainer(spec, "otelcol-accel")
	m, ok := mountFor(c, path.Dir(arg))
	if !ok {
		return ""
	}
	v, _ := volume(spec, m.Name)
	if v.ConfigMap == nil || r.configMaps[v.ConfigMap.Name] == nil {
		return ""
	}
	return r.configMaps[v.ConfigMap.Name].Data[file]
}

// compareEnv: the same variables with the same values; a variable only the
// chart sets must set what the config would default to anyway.
func compareEnv(t *testing.T, where string, kEnv, hEnv []corev1.EnvVar, defaults map[string]string) {
	t.Helper()
	km, hm := envMap(kEnv), envMap(hEnv)
	for n, v := range km {
		if hv, ok := hm[n]; !ok {
			t.Errorf("%s: helm does not set %s", where, n)
		} else if hv != v {
			t.Errorf("%s: %s is %s in kustomize, %s in helm", where, n, v, hv)
		}
	}
	for n, v := range hm {
		if _, ok := km[n]; ok {
			continue
		}
		if d, ok := defaults[n]; !ok || js(d) != v {
			t.Errorf("%s: only helm sets %s=%s (the configs' default: %q)", where, n, v, defaults[n])
		}
	}
}

func envMap(env []corev1.EnvVar) map[string]string {
	out := map[string]string{}
	for _, e := range env {
		if e.ValueFrom != nil {
			out[e.Name] = "from " + js(e.ValueFrom)
		} else {
			out[e.Name] = js(e.Value)
		}
	}
	return out
}

var envDefault = regexp.MustCompile(`\$\{env:([A-Za-z0-9_]+):-([^}]*)\}`)

// configEnvDefaults: every ${env:NAME:-default} of the shipped configs.
func configEnvDefaults(t *testing.T) map[string]string {
	t.Helper()
	files, err := chartFiles()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, b := range files {
		for _, m := range envDefault.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = m[2]
		}
	}
	return out
}

func clusterRules(r rendered) string {
	var rules []string
	for _, cr := range r.clusterRoles {
		rules = append(rules, js(cr.Rules))
	}
	sort.Strings(rules)
	return strings.Join(rules, ";")
}

// roleRules: each namespaced Role's rules, by namespace and name.
func roleRules(r rendered) string {
	out := map[string]string{}
	for _, role := range r.roles {
		out[role.Namespace+"/"+role.Name] = js(role.Rules)
	}
	return js(out)
}

// accounts: each ServiceAccount with its annotations (the IAM role).
func accounts(r rendered) string {
	out := map[string]string{}
	for _, a := range r.accounts {
		out[a.Namespace+"/"+a.Name] = js(a.Annotations)
	}
	return js(out)
}

func compareServices(t *testing.T, k, h rendered, ignoreAnnotations bool) {
	t.Helper()
	index := func(r rendered) map[string]string {
		out := map[string]string{}
		for _, s := range r.services {
			if ignoreAnnotations {
				out[s.Name] = fmt.Sprintf("ports %s", js(s.Spec.Ports))
				continue
			}
			out[s.Name] = fmt.Sprintf("ports %s annotations %s", js(s.Spec.Ports), js(s.Annotations))
		}
		return out
	}
	if kk, hh := index(k), index(h); !reflect.DeepEqual(kk, hh) {
		t.Errorf("services differ:\n kustomize %v\n helm      %v", kk, hh)
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
