package manifests

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// insights.auth.type wires the console's authenticator on every
// destination: its layer after insights.yaml, its extension added to the
// destination's own service.extensions (which stay as they were: amp keeps
// sigv4auth/aps, cloudwatch-otlp its two signers), the console's auth key
// naming it, and for bearertoken the tokens' Secret mounted where the layer
// reads them.
func TestHelmInsightsAuthOnEveryDestination(t *testing.T) {
	for _, auth := range []struct {
		typ, ext string
		set      map[string]any
	}{
		{"bearertoken", "bearertokenauth/insights", map[string]any{"insights.auth.bearerToken.secretName": "console-tokens"}},
		{"oidc", "oidc/insights", map[string]any{"insights.auth.oidc.issuerURL": "https://login.example.com", "insights.auth.oidc.audience": "console"}},
	} {
		for dest, vals := range destinationValues {
			t.Run(auth.typ+"/"+dest, func(t *testing.T) {
				_, _, base := gatewayStack(t, vals)
				set := map[string]any{"insights.enabled": true, "insights.auth.type": auth.typ}
				for k, v := range vals {
					set[k] = v
				}
				for k, v := range auth.set {
					set[k] = v
				}
				r, c, s := gatewayStack(t, set)
				args := configArgs(c)
				want := []string{"/etc/otelcol-accel/insights.yaml", "/etc/otelcol-accel/insights-" + auth.typ + ".yaml", "/etc/otelcol-accel/insights-auth-extensions.yaml"}
				if len(args) < 3 || !slices.Equal(args[len(args)-3:], want) {
					t.Fatalf("the gateway runs %v, want it to end with %v", args, want)
				}
				wantExt := append(base.list("service", "extensions"), auth.ext)
				if got := s.list("service", "extensions"); !slices.Equal(got, wantExt) {
					t.Errorf("service.extensions %v, want the destination's %v and the authenticator", got, wantExt)
				}
				if got := s.str("exporters", "accelerator_insights", "auth", "authenticator"); got != auth.ext {
					t.Errorf("the console authenticates with %q, want %s", got, auth.ext)
				}
				if _, ok := lookupExact(s.cfg, "extensions", auth.ext); !ok {
					t.Errorf("extension %s is not configured", auth.ext)
				}
				for _, p := range []string{"metrics", "logs"} {
					if got, want := s.list("service", "pipelines", p, "exporters"), base.list("service", "pipelines", p, "exporters"); !slices.Equal(got, want) {
						t.Errorf("pipeline %s exports to %v with the console's auth, %v without", p, got, want)
					}
				}
				spec := gatewaySpec(t, r)
				if auth.typ == "bearertoken" {
					file := s.str("extensions", auth.ext, "filename")
					m, ok := mountFor(c, strings.TrimSuffix(file, "/tokens"))
					if !ok {
						t.Fatalf("the tokens file %s is not on a mounted volume", file)
					}
					v, _ := volume(spec, m.Name)
					if v.Secret == nil || v.Secret.SecretName != "console-tokens" {
						t.Errorf("the tokens come from %s, want the Secret console-tokens", js(v))
					}
				} else {
					for k, want := range map[string]string{"issuer_url": "https://login.example.com", "audience": "console", "username_claim": "email"} {
						v, _ := lookupExact(s.cfg, "extensions", auth.ext, "providers")
						ps, _ := v.([]any)
						if len(ps) != 1 {
							t.Fatalf("oidc providers: %v", v)
						}
						p, _ := ps[0].(map[string]any)
						if got := resolve(p[k].(string), s.env); got != want {
							t.Errorf("oidc %s: %q, want %q", k, got, want)
						}
					}
				}
			})
		}
	}
}

// The console answers to its Service's in-cluster names and the values'
// allowedHosts, and to the origins allowedOrigins adds; with auth type none
// it loads no auth layer (and is read-only: its own tests check that).
func TestHelmInsightsAllowedHosts(t *testing.T) {
	set := map[string]any{"destination": "prometheus", "insights.enabled": true,
		"insights.allowedHosts": []any{"insights.example.com"}, "insights.allowedOrigins": []any{"https://portal.example.com"}}
	_, c, s := gatewayStack(t, set)
	for _, a := range configArgs(c) {
		if strings.Contains(a, "insights-") {
			t.Errorf("auth type none loads %s", a)
		}
	}
	var hosts, origins []string
	if err := json.Unmarshal([]byte(s.str("exporters", "accelerator_insights", "allowed_hosts")), &hosts); err != nil {
		t.Fatalf("allowed_hosts is not a YAML (JSON) list: %v", err)
	}
	svc := "otelcol-accel-insights." + helmRelease.Namespace + ".svc"
	want := []string{svc, svc + ".cluster.local", "insights.example.com"}
	if !slices.Equal(hosts, want) {
		t.Errorf("allowed_hosts %v, want %v", hosts, want)
	}
	if err := json.Unmarshal([]byte(s.str("exporters", "accelerator_insights", "allowed_origins")), &origins); err != nil || !slices.Equal(origins, []string{"https://portal.example.com"}) {
		t.Errorf("allowed_origins %v (%v)", origins, err)
	}
}

// Auth values that cannot work stop the install with what to set.
func TestHelmInsightsAuthRefusesWhatCannotWork(t *testing.T) {
	base := map[string]any{"destination": "prometheus", "insights.enabled": true}
	for _, c := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{"insights.auth.type": "basic"}, `insights.auth.type "basic": use none`},
		{map[string]any{"insights.auth.type": "bearertoken"}, "needs insights.auth.bearerToken.secretName"},
		{map[string]any{"insights.auth.type": "oidc", "insights.auth.oidc.issuerURL": "https://login.example.com"}, "needs insights.auth.oidc.issuerURL and insights.auth.oidc.audience"},
	} {
		set := map[string]any{}
		for k, v := range base {
			set[k] = v
		}
		for k, v := range c.set {
			set[k] = v
		}
		_, err := renderHelmManifests(nil, set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.set, err, c.want)
		}
	}
}
