package promschema

import (
	"slices"
	"strings"
	"testing"
)

func TestParseCollectsReferences(t *testing.T) {
	refs, err := Parse(`sum by (k8s_node_name) (max by (k8s_node_name, device) (label_replace(label_replace(` +
		`hw_power_watts{k8s_cluster_name=~".*", hw_state!="ok"}, "device", "$1", "hw_id", "(.+)"), "device", "$1", "hw_parent", "(.+)")))` +
		` / on (hw_id) group_left (gen_ai_request_model) group by (hw_id, gen_ai_request_model) (rate(x_total[1m]) > 0) * 1e6` +
		` unless topk(15, histogram_quantile(0.99, sum by (le) (rate(y_bucket{a="b"}[5m]))))` +
		` or label_join({__name__="z"}, "joined", ",", "p", "q")`)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"hw_power_watts", "x_total", "y_bucket", "z"}; !slices.Equal(refs.Metrics, want) {
		t.Errorf("metrics %v, want %v", refs.Metrics, want)
	}
	for _, l := range []string{"k8s_node_name", "device", "k8s_cluster_name", "hw_state", "hw_id", "hw_parent", "gen_ai_request_model", "le", "a", "p", "q"} {
		if !slices.Contains(refs.Labels, l) {
			t.Errorf("label %s not found in %v", l, refs.Labels)
		}
	}
	if !slices.Equal(refs.NewLabels, []string{"joined", "device", "device"}) && !slices.Equal(refs.NewLabels, []string{"device", "device", "joined"}) {
		t.Errorf("label_replace/label_join destinations %v", refs.NewLabels)
	}
	if want := (Matcher{"hw_state", "!=", "ok"}); !slices.Contains(refs.Matchers, want) {
		t.Errorf("matchers %v lack %v", refs.Matchers, want)
	}
	for _, bad := range []string{`sum(x`, `x{a="b"`, `x{a}`, `x{a=="b"}`, `rate(x[1m]`, `x{a="b}`, `x) (`, `sum by (a b) (x)`, `{a="b"}`} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestCheckerRejectsWhatTheCollectorDoesNotEmit(t *testing.T) {
	c, err := NewChecker()
	if err != nil {
		t.Fatal(err)
	}
	c.Metrics["team:waste:rate1h"] = []string{"window"}
	for _, good := range []string{
		`hw_status{hw_state="failed"} == 1`,
		`sum by (accelerator_team) (rate(accelerator_waste_USD_total{accelerator_waste_reason=~"idle|unallocated"}[1h]))`,
		`team:waste:rate1h{window="1h"} > 1`,
		`histogram_quantile(0.9, sum by (le) (rate(gen_ai_server_time_to_first_token_seconds_bucket[5m])))`,
	} {
		if errs := c.Check(good); len(errs) != 0 {
			t.Errorf("%s: %v", good, errs)
		}
	}
	for bad, want := range map[string]string{
		`hw_status{hw_state="broken"}`:             `hw_state="broken" is not a value of hw.state`,
		`gpu_utilization`:                          "metric gpu_utilization is not emitted",
		`sum by (team) (hw_status)`:                "label team is not a registered attribute",
		`hw_errors_total{accelerator_xid_code=""}`: "label accelerator_xid_code",
		`1 + 1`:                        "reads no metric",
		`team:waste:rate1h{other="x"}`: "label other",
	} {
		errs := c.Check(bad)
		if len(errs) == 0 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%s: errors %v, want %q", bad, errs, want)
		}
	}
}
