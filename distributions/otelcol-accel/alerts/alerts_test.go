package alerts

import (
	"bytes"
	"flag"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-accel/otelcol-accel/distributions/otelcol-accel/dashboards/promschema"
	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

var update = flag.Bool("update", false, "rewrite the generated rule files from rules.go")

func TestGeneratedFilesAreUpToDate(t *testing.T) {
	for name, gen := range map[string]func() ([]byte, error){RulesFile: RulesYAML, PrometheusRuleFile: PrometheusRuleYAML} {
		want, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(name, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (run `make manifests`)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date with rules.go (or internal/xid): run `make manifests`", name)
		}
	}
}

// shipped reads the groups from the committed files, not from rules.go: the
// files are what users load.
func shipped(t *testing.T) (plain, operator []Group) {
	t.Helper()
	raw, err := os.ReadFile(RulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []Group `yaml:"groups"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", RulesFile, err)
	}
	raw, err = os.ReadFile(PrometheusRuleFile)
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name      string            `yaml:"name"`
			Namespace string            `yaml:"namespace"`
			Labels    map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec struct {
			Groups []Group `yaml:"groups"`
		} `yaml:"spec"`
	}
	dec = yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&pr); err != nil {
		t.Fatalf("%s: %v", PrometheusRuleFile, err)
	}
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" || pr.Metadata.Name == "" {
		t.Errorf("%s: want a named monitoring.coreos.com/v1 PrometheusRule, got %s %s", PrometheusRuleFile, pr.APIVersion, pr.Kind)
	}
	return f.Groups, pr.Spec.Groups
}

func TestPrometheusRuleIsTheRulesFile(t *testing.T) {
	plain, operator := shipped(t)
	if len(plain) == 0 {
		t.Fatal("no rule groups")
	}
	if !reflect.DeepEqual(plain, operator) {
		t.Errorf("%s and %s hold different rules", RulesFile, PrometheusRuleFile)
	}
}

var severities = []string{"critical", "warning", "info"}

func TestEveryAlertSaysWhatToDo(t *testing.T) {
	plain, _ := shipped(t)
	for _, g := range plain {
		for _, r := range g.Rules {
			if r.Alert == "" {
				if r.Record == "" || len(r.Labels)+len(r.Annotations) != 0 {
					t.Errorf("%s: a rule is either an alert or a plain recording rule: %+v", g.Name, r)
				}
				continue
			}
			if !slices.Contains(severities, r.Labels["severity"]) {
				t.Errorf("%s: severity %q, want one of %v", r.Alert, r.Labels["severity"], severities)
			}
			for _, a := range []string{"summary", "description", "runbook"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s: no %s annotation", r.Alert, a)
				}
			}
			if !strings.HasPrefix(r.Annotations["runbook"], "Action: ") && !strings.Contains(r.Annotations["runbook"], "Action: ") {
				t.Errorf("%s: the runbook must name the action (\"Action: …\"): %q", r.Alert, r.Annotations["runbook"])
			}
			if action, ok := r.Labels["action"]; ok {
				if !as.EnumAction.Has(action) {
					t.Errorf("%s: action %q is not a value of %s", r.Alert, action, as.EnumAction.Name)
				}
				if !strings.Contains(r.Annotations["runbook"], "Action: "+action+" ") {
					t.Errorf("%s: the runbook names another action than its label %s: %q", r.Alert, action, r.Annotations["runbook"])
				}
			}
		}
	}
}

// The condition alerts carry internal/xid's action for their condition.
func TestConditionAlertsTakeTheirActionFromXID(t *testing.T) {
	plain, _ := shipped(t)
	want := map[string]xid.Condition{
		"AcceleratorRowRemapFailed":         xid.RowRemapFailed,
		"AcceleratorRowRemapPendingTooLong": xid.RowRemapPending,
		"AcceleratorMPSDaemonDown":          xid.MPSDaemonDown,
		"NeuronUncorrectableECC":            xid.NeuronMemECCUncorrected,
	}
	seen := map[string]bool{}
	for _, g := range plain {
		for _, r := range g.Rules {
			if c, ok := want[r.Alert]; ok {
				seen[r.Alert] = true
				if got, exp := r.Labels["action"], xid.ForCondition(c).Action; got != exp {
					t.Errorf("%s: action %q, internal/xid says %q", r.Alert, got, exp)
				}
			}
		}
	}
	for a := range want {
		if !seen[a] {
			t.Errorf("alert %s is missing", a)
		}
	}
	if xid.ForCondition(xid.NeuronSRAMECCUncorrected).Action != xid.ForCondition(xid.NeuronMemECCUncorrected).Action {
		t.Error("NeuronUncorrectableECC covers SRAM and memory ECC with one action; internal/xid now gives them different ones")
	}
}

var xidList = regexp.MustCompile(`accelerator_xid=~"([0-9|]+)"`)

// Every XID internal/xid classifies as failed pages, in exactly one rule,
// whose action is the catalogue's.
func TestFatalXIDRulesCoverTheCatalogue(t *testing.T) {
	plain, _ := shipped(t)
	ruleOf := map[int]string{}
	for _, g := range plain {
		for _, r := range g.Rules {
			if r.Alert != "AcceleratorFatalXID" {
				continue
			}
			m := xidList.FindStringSubmatch(r.Expr)
			if m == nil {
				t.Fatalf("AcceleratorFatalXID without an XID list: %s", r.Expr)
			}
			for _, s := range strings.Split(m[1], "|") {
				code, _ := strconv.Atoi(s)
				if prev, dup := ruleOf[code]; dup {
					t.Errorf("XID %d in the %s and the %s rule", code, prev, r.Labels["action"])
				}
				ruleOf[code] = r.Labels["action"]
				c := xid.Lookup(code)
				if c.State != as.HWStateFailed {
					t.Errorf("XID %d pages but internal/xid classifies it %s", code, c.State)
				}
				if c.Action != r.Labels["action"] {
					t.Errorf("XID %d: rule action %s, internal/xid says %s", code, r.Labels["action"], c.Action)
				}
			}
		}
	}
	for code := 1; code < maxXID; code++ {
		if c := xid.Lookup(code); c.Known && c.State == as.HWStateFailed {
			if _, ok := ruleOf[code]; !ok {
				t.Errorf("fatal XID %d (%s) has no alert", code, c.Mnemonic)
			}
		}
	}
	if len(ruleOf) == 0 {
		t.Error("no fatal XID is alerted on")
	}
}

// Every metric and label a rule reads is one the collector emits: our
// schema (through the prometheus exporter), the components' own telemetry,
// Prometheus's up, or a recording rule of the same file.
func TestRulesUseRegisteredNames(t *testing.T) {
	checker, err := promschema.NewChecker()
	if err != nil {
		t.Fatal(err)
	}
	for name, labels := range selfTelemetry(t) {
		checker.Metrics[name] = labels
	}
	if _, ok := checker.Metrics["otelcol_receiver_dcgm_scrapes_failed"]; !ok {
		t.Fatal("the dcgm receiver's scrapes_failed counter is not declared in its metadata.yaml")
	}
	checker.Metrics["up"] = nil
	plain, _ := shipped(t)
	for _, g := range plain {
		for _, r := range g.Rules {
			if r.Record != "" {
				checker.Metrics[r.Record] = nil
			}
		}
	}
	for _, g := range plain {
		for _, r := range g.Rules {
			for _, err := range checker.Check(r.Expr) {
				t.Errorf("%s%s: %v", r.Alert, r.Record, err)
			}
		}
	}
}

// The promtool tests (test/e2e/alerts_test.go runs them) give every alert a
// case where it fires and one where it must not.
func TestEveryAlertHasFiringAndQuietCases(t *testing.T) {
	raw, err := os.ReadFile("testdata/rules_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		RuleFiles []string `yaml:"rule_files"`
		Tests     []struct {
			AlertRuleTests []struct {
				Alertname string           `yaml:"alertname"`
				ExpAlerts []map[string]any `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.RuleFiles, []string{"../" + RulesFile}) {
		t.Errorf("rule_files %v: the tests must load the shipped file ../%s", f.RuleFiles, RulesFile)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range f.Tests {
		for _, a := range tc.AlertRuleTests {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	plain, _ := shipped(t)
	for _, g := range plain {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			if !fires[r.Alert] {
				t.Errorf("%s: no promtool case where it fires", r.Alert)
			}
			if !quiet[r.Alert] {
				t.Errorf("%s: no promtool case where it must not fire", r.Alert)
			}
		}
	}
}
