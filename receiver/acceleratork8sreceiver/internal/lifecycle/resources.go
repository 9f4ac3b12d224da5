// Package lifecycle reads an accelerator pod's life from Kubernetes
// objects: which pods hold accelerators, what their cold start took phase
// by phase, and what they lack when they cannot be scheduled. It is pure:
// objects in, measurements out, so every rule is tested on objects with
// known timestamps.
package lifecycle

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Matcher says which resource names are accelerators.
type Matcher struct {
	exact    map[string]bool
	prefixes []string
}

// NewMatcher takes names and prefixes ending in *.
func NewMatcher(names []string) Matcher {
	m := Matcher{exact: map[string]bool{}}
	for _, n := range names {
		if p, ok := strings.CutSuffix(n, "*"); ok {
			m.prefixes = append(m.prefixes, p)
			continue
		}
		m.exact[n] = true
	}
	return m
}

// Is reports whether name is an accelerator resource.
func (m Matcher) Is(name string) bool {
	if m.exact[name] {
		return true
	}
	for _, p := range m.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// draPrefix names a DRA claim's accelerators (the claim's device class is
// not on the pod, so the claim's name in the pod spec stands for it).
const draPrefix = "dra:"

// Requested lists the accelerator resources a pod asks for (limits or
// requests of any container, init containers included), sorted, and
// "dra:<claim>" for each of its DRA resource claims.
func (m Matcher) Requested(p *corev1.Pod) []string {
	var out []string
	add := func(rl corev1.ResourceList) {
		for name := range rl {
			if n := string(name); m.Is(n) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			add(cs[i].Resources.Limits)
			add(cs[i].Resources.Requests)
		}
	}
	for _, c := range p.Spec.ResourceClaims {
		out = append(out, draPrefix+c.Name)
	}
	slices.Sort(out)
	return out
}

// Placement is what a pod asks of its node: an instance type and zone,
// "any" when it does not ask for one value.
type Placement struct {
	InstanceType, Zone string
}

// Any is the value of a placement a pod does not constrain.
const Any = "any"

var (
	instanceTypeKeys = []string{"node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"}
	zoneKeys         = []string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}
)

// PlacementOf reads the node selector, then the required node affinity
// (a single-valued In term).
func PlacementOf(p *corev1.Pod) Placement {
	return Placement{InstanceType: asked(p, instanceTypeKeys), Zone: asked(p, zoneKeys)}
}

func asked(p *corev1.Pod, keys []string) string {
	for _, k := range keys {
		if v := p.Spec.NodeSelector[k]; v != "" {
			return v
		}
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return Any
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if slices.Contains(keys, e.Key) && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 {
				return e.Values[0]
			}
		}
	}
	return Any
}
