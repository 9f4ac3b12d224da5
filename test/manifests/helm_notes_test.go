package manifests

import (
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

func renderHelmNotes(t *testing.T, set map[string]any) string {
	t.Helper()
	chrt, err := loader.Load(chartDir())
	if err != nil {
		t.Fatal(err)
	}
	vals, err := helmValues(nil, set)
	if err != nil {
		t.Fatal(err)
	}
	top, err := chartutil.ToRenderValues(chrt, vals, helmRelease, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(chrt, top)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range out {
		if strings.HasSuffix(name, "/NOTES.txt") {
			return s
		}
	}
	t.Fatal("the chart has no NOTES.txt")
	return ""
}

// Every Service the notes tell the user to port-forward is one the chart
// renders, on the port it names.
func TestHelmNotesPortForwardRenderedServices(t *testing.T) {
	set := map[string]any{"region": "us-east-1", "insights.enabled": true, "insights.port": 9686}
	notes := renderHelmNotes(t, set)
	objs, _, err := renderHelm(nil, set)
	if err != nil {
		t.Fatal(err)
	}
	r := sortObjects("helm notes", objs)
	forwards := regexp.MustCompile(`port-forward svc/(\S+) (\d+)`).FindAllStringSubmatch(notes, -1)
	if len(forwards) < 2 {
		t.Fatalf("the notes name %d port-forwards, want the gateway's and the console's:\n%s", len(forwards), notes)
	}
	for _, f := range forwards {
		found := false
		for _, s := range r.services {
			for _, p := range s.Spec.Ports {
				if s.Name == f[1] && js(p.Port) == f[2] {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("the notes port-forward svc/%s %s, which the chart does not render", f[1], f[2])
		}
	}
	if !strings.Contains(notes, "http://127.0.0.1:9686/") {
		t.Errorf("the notes do not give the console's URL:\n%s", notes)
	}
	if off := renderHelmNotes(t, map[string]any{"region": "us-east-1"}); strings.Contains(off, "insights") || strings.Contains(off, "emediation") {
		t.Errorf("the notes mention the console or remediation with both off:\n%s", off)
	}
	on := renderHelmNotes(t, map[string]any{"region": "us-east-1", "remediation.enabled": true})
	if !strings.Contains(on, "Remediation is on in recommend mode, the gateway running as otelcol-accel-remediator") {
		t.Errorf("the notes do not say remediation is on, in which mode and as whom:\n%s", on)
	}
}
