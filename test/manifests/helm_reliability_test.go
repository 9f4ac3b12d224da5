package manifests

import (
	"reflect"
	"slices"
	"testing"
)

// reliability.enabled runs k8s-reliability.yaml on the gateway as
// overlays/reliability does: the gateway gets its own account (or keeps
// the remediator's) bound to a ClusterRole with exactly the overlay's
// rules, the agents keep their smaller read-only one, and accelerator_k8s
// feeds the gateway's metrics and logs pipelines.
func TestHelmReliability(t *testing.T) {
	objs, err := render("overlays/reliability")
	if err != nil {
		t.Fatal(err)
	}
	overlay := sortObjects("overlays/reliability", objs)
	var want any
	for _, cr := range overlay.clusterRoles {
		if cr.Name == "otelcol-accel-gateway" {
			want = cr.Rules
		}
	}
	if want == nil {
		t.Fatal("overlays/reliability has no ClusterRole otelcol-accel-gateway")
	}
	role := map[string]any{"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/otelcol-accel"}
	for _, tc := range []struct {
		set     map[string]any
		account string
		configs []string
	}{
		{map[string]any{"region": "us-east-1", "reliability.enabled": true, "serviceAccount.annotations": role}, "otelcol-accel-gateway",
			[]string{"/etc/otelcol-accel/cloudwatch-emf.yaml", "/etc/otelcol-accel/k8s-reliability.yaml"}},
		{map[string]any{"region": "us-east-1", "reliability.enabled": true, "remediation.enabled": true, "serviceAccount.annotations": role}, "otelcol-accel-remediator",
			[]string{"/etc/otelcol-accel/cloudwatch-emf.yaml", "/etc/otelcol-accel/k8s-reliability.yaml", "/etc/otelcol-accel/remediation.yaml"}},
	} {
		r, c, s := gatewayStack(t, tc.set)
		checkRBAC(t, r) // the agents' account: still exactly its own rules
		if got := gatewaySpec(t, r).ServiceAccountName; got != tc.account {
			t.Errorf("%v: the gateway runs as %q, want %q", tc.set, got, tc.account)
		}
		if got := configArgs(c); !slices.Equal(got, tc.configs) {
			t.Errorf("%v: the gateway runs %v, want %v", tc.set, got, tc.configs)
		}
		var got any
		for _, cr := range r.clusterRoles {
			if cr.Name == "otelcol-accel-gateway-k8s" {
				got = cr.Rules
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: the chart's gateway ClusterRole grants %s, overlays/reliability %s", tc.set, js(got), js(want))
		}
		if subs := r.bindings["ClusterRole/otelcol-accel-gateway-k8s"]; !slices.Equal(subs, []string{helmRelease.Namespace + "/" + tc.account}) {
			t.Errorf("%v: the gateway ClusterRole is bound to %v, want the gateway's account only", tc.set, subs)
		}
		for _, a := range r.accounts {
			if a.Name == tc.account && a.Annotations["eks.amazonaws.com/role-arn"] != role["eks.amazonaws.com/role-arn"] {
				t.Errorf("%v: the gateway's account %s lacks its IRSA role", tc.set, a.Name)
			}
		}
		for _, p := range []string{"metrics", "logs"} {
			if got := s.list("service", "pipelines", p, "receivers"); !slices.Contains(got, "accelerator_k8s") || !slices.Contains(got, "otlp") {
				t.Errorf("%v: the %s pipeline reads %v, want otlp and accelerator_k8s", tc.set, p, got)
			}
		}
	}

	r, c, _ := gatewayStack(t, map[string]any{"region": "us-east-1"})
	if slices.Contains(configArgs(c), "/etc/otelcol-accel/k8s-reliability.yaml") || len(r.bindings["ClusterRole/otelcol-accel-gateway-k8s"]) != 0 {
		t.Error("reliability off still runs its layer or binds its ClusterRole")
	}
}
