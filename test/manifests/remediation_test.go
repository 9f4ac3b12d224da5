package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// remediatorRules are the verbs the remediation exporter's code uses
// (exporter/acceleratorremediationexporter/internal/kube and its leader
// election), no more: its tests run every call against a real kube-apiserver
// as this role and show that dropping any one verb breaks a call.
var remediatorRules = map[string][]string{
	"/nodes":                           {"get", "list", "watch", "update"},
	"/nodes/status":                    {"patch"},
	"/pods":                            {"get", "list"},
	"/pods/eviction":                   {"create"},
	"/events":                          {"create"},
	"resource.k8s.io/devicetaintrules": {"create"},
	"karpenter.sh/nodeclaims":          {"list", "delete"},
}

var remediatorLeaseRules = map[string][]string{
	"coordination.k8s.io/leases": {"get", "create", "update"},
	// The plans, shared by the replicas (internal/kube's PlanStore).
	"/configmaps": {"list", "create", "update", "delete"},
}

func grants(t *testing.T, rules []rbacv1.PolicyRule) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 || len(r.ResourceNames) > 0 {
			t.Errorf("rule %v grants non-resource URLs or named resources", r)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				out[g+"/"+res] = append(out[g+"/"+res], r.Verbs...)
			}
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

func sorted(m map[string][]string) map[string][]string {
	out := map[string][]string{}
	for k, v := range m {
		out[k] = slices.Sorted(slices.Values(v))
	}
	return out
}

func TestRemediationOverlay(t *testing.T) {
	objs, err := render("overlays/remediation")
	if err != nil {
		t.Fatal(err)
	}
	r := sortObjects("overlays/remediation", objs)

	var remediator, agent, tokenReview *rbacv1.ClusterRole
	for _, cr := range r.clusterRoles {
		switch cr.Name {
		case "otelcol-accel-remediator":
			remediator = cr
		case "otelcol-accel":
			agent = cr
		case "otelcol-accel-tokenreview":
			tokenReview = cr
		default:
			t.Errorf("unexpected ClusterRole %s", cr.Name)
		}
	}
	if remediator == nil || agent == nil {
		t.Fatalf("want the agents' and the remediator's ClusterRoles, got %d", len(r.clusterRoles))
	}
	if got, want := grants(t, remediator.Rules), sorted(remediatorRules); !mapsEqual(got, want) {
		t.Errorf("remediator ClusterRole grants %v; the code uses exactly %v", got, want)
	}
	// The gateway's k8s_token_auth verifies the agents' tokens: that alone.
	if tokenReview == nil {
		t.Error("no otelcol-accel-tokenreview ClusterRole: the gateway cannot verify the agents' tokens")
	} else if got, want := grants(t, tokenReview.Rules), map[string][]string{"authentication.k8s.io/tokenreviews": {"create"}}; !mapsEqual(got, want) {
		t.Errorf("otelcol-accel-tokenreview grants %v, want %v", got, want)
	}
	if got, want := grants(t, agent.Rules), sorted(allowedRules); !mapsEqual(got, want) {
		t.Errorf("the agents' ClusterRole grants %v; they stay read-only: %v", got, want)
	}
	if len(r.roles) != 1 || r.roles[0].Name != "otelcol-accel-remediator" {
		t.Fatalf("want one Role (the remediator's Lease), got %d", len(r.roles))
	}
	if got, want := grants(t, r.roles[0].Rules), sorted(remediatorLeaseRules); !mapsEqual(got, want) {
		t.Errorf("remediator Role grants %v; leader election uses %v", got, want)
	}

	bound := map[string]string{} // role → service account
	for _, o := range objs {
		switch b := o.(type) {
		case *rbacv1.ClusterRoleBinding:
			for _, s := range b.Subjects {
				bound["ClusterRole/"+b.RoleRef.Name] = s.Namespace + "/" + s.Name
			}
		case *rbacv1.RoleBinding:
			for _, s := range b.Subjects {
				bound["Role/"+b.RoleRef.Name] = s.Namespace + "/" + s.Name
			}
		}
	}
	want := map[string]string{
		"ClusterRole/otelcol-accel":             "otelcol-accel/otelcol-accel",
		"ClusterRole/otelcol-accel-remediator":  "otelcol-accel/otelcol-accel-remediator",
		"Role/otelcol-accel-remediator":         "otelcol-accel/otelcol-accel-remediator",
		"ClusterRole/otelcol-accel-tokenreview": "otelcol-accel/otelcol-accel-remediator",
	}
	for k, v := range want {
		if bound[k] != v {
			t.Errorf("%s bound to %q, want %q", k, bound[k], v)
		}
	}

	for _, d := range r.deployments {
		if d.Name == "otelcol-accel-gateway" && d.Spec.Template.Spec.ServiceAccountName != "otelcol-accel-remediator" {
			t.Errorf("the gateway runs as %q, want the remediator's account", d.Spec.Template.Spec.ServiceAccountName)
		}
		if d.Name == "otelcol-accel-gateway" && !slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--config=/etc/otelcol-accel/remediation.yaml") {
			t.Errorf("the gateway does not load remediation.yaml: %v", d.Spec.Template.Spec.Containers[0].Args)
		}
	}
	for _, ds := range r.daemonSets {
		if ds.Spec.Template.Spec.ServiceAccountName != "otelcol-accel" {
			t.Errorf("agent %s runs as %q, want the read-only otelcol-accel account", ds.Name, ds.Spec.Template.Spec.ServiceAccountName)
		}
	}

	src, err := os.ReadFile(filepath.Join(configDir(), "remediation.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cm := r.configMaps["otelcol-accel-gateway"]
	if cm == nil || cm.Data["remediation.yaml"] != string(src) {
		t.Error("overlays/remediation/gateway-config.yaml differs from config/remediation.yaml; copy it again")
	}
	if cm != nil && cm.Data["gateway.yaml"] == "" {
		t.Error("the patch dropped gateway.yaml from the gateway's ConfigMap")
	}
}

func mapsEqual(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
