package manifests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// chartConfigs are the collector configs the chart's ConfigMaps carry,
// copied byte for byte from distributions/otelcol-accel/config into the
// chart's files/ (Helm reads no file outside the chart).
var chartConfigs = []string{
	"agent.yaml", "agent-to-gateway.yaml",
	"gateway.yaml", "otlp.yaml", "cloudwatch-emf.yaml", "cloudwatch-otlp.yaml", "amp.yaml",
	"insights.yaml", "insights-bearertoken.yaml", "insights-oidc.yaml", "remediation.yaml", "k8s-reliability.yaml",
}

// chartFiles returns what each file under the chart's files/ must hold.
func chartFiles() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range chartConfigs {
		raw, err := os.ReadFile(filepath.Join(configDir(), f))
		if err != nil {
			return nil, fmt.Errorf("config file for the chart: %w", err)
		}
		out[f] = raw
	}
	// The alert rules as a PrometheusRule (prometheusRule.enabled).
	raw, err := os.ReadFile(filepath.Join(distDir(), "alerts", "prometheusrule.yaml"))
	if err != nil {
		return nil, fmt.Errorf("alert rules for the chart: %w", err)
	}
	out["prometheusrule.yaml"] = raw
	// The remediator's rules, as overlays/remediation grants them.
	rbac, err := os.ReadFile(filepath.Join(kubernetesDir(), remediatorRBAC))
	if err != nil {
		return nil, fmt.Errorf("the remediator's RBAC for the chart: %w", err)
	}
	// The gateway's reliability rules, as overlays/reliability grants them.
	grbac, err := os.ReadFile(filepath.Join(kubernetesDir(), reliabilityRBAC))
	if err != nil {
		return nil, fmt.Errorf("the gateway's reliability RBAC for the chart: %w", err)
	}
	rules, err := rulesOf(string(grbac), "ClusterRole")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", reliabilityRBAC, err)
	}
	out[reliabilityRuleFile] = []byte(rules)
	for kind, file := range remediatorRuleFiles {
		rules, err := rulesOf(string(rbac), kind)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", remediatorRBAC, err)
		}
		out[file] = []byte(rules)
	}
	return out, nil
}

const remediatorRBAC = "overlays/remediation/remediator-rbac.yaml"

// reliabilityRBAC is the gateway's ClusterRole for accelerator_k8s; the
// chart grants its rules from reliabilityRuleFile (reliability.enabled).
const (
	reliabilityRBAC     = "overlays/reliability/gateway-rbac.yaml"
	reliabilityRuleFile = "gateway-k8s-clusterrole-rules.yaml"
)

// remediatorRuleFiles: the chart's copy of each of the remediator's roles'
// rules, by kind, so that the chart grants what the overlay grants (its
// tests pin that to the code) from the same text, comments included.
var remediatorRuleFiles = map[string]string{
	"ClusterRole": "remediator-clusterrole-rules.yaml",
	"Role":        "remediator-role-rules.yaml",
}

// rulesOf returns the text of the rules of the one document of that kind:
// the lines after its top-level "rules:", as indented there.
func rulesOf(manifest, kind string) (string, error) {
	var found []string
	for _, doc := range strings.Split(manifest, "\n---\n") {
		if !strings.Contains("\n"+doc+"\n", "\nkind: "+kind+"\n") {
			continue
		}
		_, rules, ok := strings.Cut(doc, "\nrules:\n")
		if !ok {
			return "", fmt.Errorf("the %s has no rules", kind)
		}
		found = append(found, strings.TrimRight(rules, "\n")+"\n")
	}
	if len(found) != 1 {
		return "", fmt.Errorf("want one %s, found %d", kind, len(found))
	}
	return found[0], nil
}
