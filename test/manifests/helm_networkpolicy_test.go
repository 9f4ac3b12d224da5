package manifests

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The gateway's NetworkPolicy (issue 36): it selects the gateway's pods,
// admits OTLP from the pods of this release's agent DaemonSets as they are
// rendered (and the peers otlpFrom names), the console only from the peers
// insightsFrom names, and leaves metrics and health open; off, nothing.
func TestHelmGatewayNetworkPolicy(t *testing.T) {
	policies := func(set map[string]any) ([]*networkingv1.NetworkPolicy, rendered) {
		set["destination"] = "prometheus"
		objs, _, err := renderHelm(nil, set)
		if err != nil {
			t.Fatal(err)
		}
		var out []*networkingv1.NetworkPolicy
		for _, o := range objs {
			if np, ok := o.(*networkingv1.NetworkPolicy); ok {
				out = append(out, np)
			}
		}
		return out, sortObjects("helm", objs)
	}

	nps, r := policies(map[string]any{"insights.enabled": true})
	if len(nps) != 1 {
		t.Fatalf("%d NetworkPolicies, want the gateway's", len(nps))
	}
	np := nps[0]
	gateway := gatewaySpec(t, r)
	if !selects(np.Spec.PodSelector, gatewayPodLabels(t, r)) {
		t.Errorf("the policy's selector %v does not select the gateway's pods", np.Spec.PodSelector)
	}
	byPort := map[string][]networkingv1.NetworkPolicyPeer{}
	open := map[string]bool{}
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			if len(rule.From) == 0 {
				open[p.Port.String()] = true
			}
			byPort[p.Port.String()] = append(byPort[p.Port.String()], rule.From...)
		}
	}
	for _, port := range []string{"otlp-grpc", "otlp-http"} {
		if open[port] {
			t.Errorf("%s is open to every pod", port)
		}
		for _, ds := range r.daemonSets {
			if !admitted(byPort[port], ds.Spec.Template.Labels) {
				t.Errorf("the agent DaemonSet %s's pods (%v) may not send %s", ds.Name, ds.Spec.Template.Labels, port)
			}
		}
		if admitted(byPort[port], map[string]string{"app": "some-other-pod"}) {
			t.Errorf("any pod may send %s", port)
		}
	}
	if _, ok := byPort["insights"]; ok {
		t.Errorf("the console is reachable with no insightsFrom: %v", byPort["insights"])
	}
	for _, port := range []string{"prometheus", "health"} {
		if !open[port] {
			t.Errorf("%s should stay open (scrapes, probes)", port)
		}
	}
	// Every port the policy names is one the gateway's container has.
	for port := range byPort {
		if !slices.ContainsFunc(gateway.Containers[0].Ports, func(p corev1.ContainerPort) bool { return p.Name == port }) {
			t.Errorf("the policy names port %s, which the gateway does not have", port)
		}
	}

	peer := map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"team": "platform"}}}
	nps, _ = policies(map[string]any{"insights.enabled": true, "networkPolicy.insightsFrom": []any{peer}, "networkPolicy.otlpFrom": []any{peer}})
	var insights, otlp int
	for _, rule := range nps[0].Spec.Ingress {
		for _, p := range rule.Ports {
			switch p.Port.String() {
			case "insights":
				insights += len(rule.From)
			case "otlp-grpc":
				otlp += len(rule.From)
			}
		}
	}
	if insights != 1 || otlp != 3 {
		t.Errorf("with peers named: the console admits %d peers (want 1), OTLP %d (want the 2 agents and 1)", insights, otlp)
	}

	if nps, _ := policies(map[string]any{"networkPolicy.enabled": false}); len(nps) != 0 {
		t.Errorf("networkPolicy.enabled=false still renders %d", len(nps))
	}
}

func gatewayPodLabels(t *testing.T, r rendered) map[string]string {
	t.Helper()
	for _, d := range r.deployments {
		if d.Spec.Template.Labels["app.kubernetes.io/name"] == "otelcol-accel-gateway" {
			return d.Spec.Template.Labels
		}
	}
	for _, s := range r.statefulSets {
		if s.Spec.Template.Labels["app.kubernetes.io/name"] == "otelcol-accel-gateway" {
			return s.Spec.Template.Labels
		}
	}
	t.Fatal("no gateway workload")
	return nil
}

func selects(sel metav1.LabelSelector, podLabels map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(&sel)
	return err == nil && s.Matches(labels.Set(podLabels))
}

// admitted: a peer with only a podSelector admits pods of the policy's own
// namespace, where the release's agents run.
func admitted(peers []networkingv1.NetworkPolicyPeer, podLabels map[string]string) bool {
	for _, p := range peers {
		if p.PodSelector != nil && p.NamespaceSelector == nil && selects(*p.PodSelector, podLabels) {
			return true
		}
	}
	return false
}
