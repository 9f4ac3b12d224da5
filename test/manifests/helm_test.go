package manifests

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

func TestHelmChartFilesMatchConfigs(t *testing.T) {
	want, err := chartFiles()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(chartDir(), "files")
	if *update {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if _, ok := want[e.Name()]; !ok {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
		}
		for name, b := range want {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok {
			t.Errorf("files/%s is no longer generated: run `make manifests`", e.Name())
		}
	}
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("the chart's files/%s is out of date with its source: run `make manifests`", name)
		}
	}
}

// helmCase is one way to install the chart.
type helmCase struct {
	name   string
	values []string
	set    map[string]any
}

func helmCases(t *testing.T) []helmCase {
	t.Helper()
	files, err := helmExamples()
	if err != nil {
		t.Fatalf("examples: %v", err)
	}
	// The promise of the chart: a region and nothing else.
	cases := []helmCase{{name: "only a region", set: map[string]any{"region": "eu-west-1"}}}
	for _, f := range files {
		cases = append(cases, helmCase{name: "examples/" + filepath.Base(f), values: []string{f}})
	}
	return cases
}

func renderHelmCase(t *testing.T, c helmCase) (rendered, []operatorObject) {
	t.Helper()
	objs, operator, err := renderHelm(c.values, c.set)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	return sortObjects("helm "+c.name, objs), operator
}

func TestHelmChartRendersEveryExampleStrictly(t *testing.T) {
	for _, c := range helmCases(t) {
		t.Run(c.name, func(t *testing.T) {
			r, _ := renderHelmCase(t, c)
			checkRBAC(t, r)
			agents := 0
			vals, _ := helmValues(c.values, c.set)
			for _, a := range []string{"nvidia", "neuron"} {
				if enabled, ok := lookupValue(vals, "agents", a, "enabled"); !ok || enabled != false {
					agents++
				}
			}
			checkWorkloads(t, r, agents)
			checkServiceAccountCredentials(t, c, r, vals)
		})
	}
}

func lookupValue(vals map[string]any, path ...string) (any, bool) {
	var cur any = vals
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// An AWS destination needs the region on the gateway; an IRSA example must
// annotate the service account with a role, a Pod Identity one must not
// (the association lives in EKS).
func checkServiceAccountCredentials(t *testing.T, c helmCase, r rendered, vals map[string]any) {
	dest, _ := lookupValue(vals, "destination")
	if dest == nil {
		dest = "cloudwatch-emf"
	}
	gw := gatewaySpec(t, r)
	gc, _ := findContainer(gw, "otelcol-accel")
	env := containerEnv(gc)
	switch dest {
	case "cloudwatch-emf", "cloudwatch-otlp", "amp":
		if env["AWS_REGION"] == "" {
			t.Errorf("%s: destination %s without AWS_REGION on the gateway", c.name, dest)
		}
	}
	// The agents' account, and the remediator's when the gateway runs as it.
	want := 1
	if on, _ := lookupValue(vals, "remediation", "enabled"); on == true {
		want = 2
	}
	if len(r.accounts) != want {
		t.Fatalf("%s: want %d ServiceAccounts, got %d", c.name, want, len(r.accounts))
	}
	for _, a := range r.accounts {
		role := a.Annotations["eks.amazonaws.com/role-arn"]
		switch {
		case strings.Contains(c.name, "irsa") && !strings.HasPrefix(role, "arn:aws:iam::"):
			t.Errorf("%s: an IRSA example must annotate service account %s with a role ARN", c.name, a.Name)
		case strings.Contains(c.name, "pod-identity") && role != "":
			t.Errorf("%s: with EKS Pod Identity service account %s carries no role annotation", c.name, a.Name)
		}
	}
}

func gatewaySpec(t *testing.T, r rendered) corev1.PodSpec {
	t.Helper()
	switch {
	case len(r.deployments) == 1:
		return r.deployments[0].Spec.Template.Spec
	case len(r.statefulSets) == 1:
		return r.statefulSets[0].Spec.Template.Spec
	}
	t.Fatalf("%s: no gateway", r.root)
	return corev1.PodSpec{}
}

func TestHelmChartLints(t *testing.T) {
	for _, c := range helmCases(t) {
		vals, err := helmValues(c.values, c.set)
		if err != nil {
			t.Fatal(err)
		}
		res := lint.All(chartDir(), vals, helmRelease.Namespace, false)
		for _, m := range res.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("%s: helm lint: %s", c.name, m)
			}
		}
	}
}

// The gateway scales only as a StatefulSet, each replica with its own
// queue, and the HPA targets it.
func TestHelmAutoscaledGatewayKeepsAQueuePerReplica(t *testing.T) {
	objs, _, err := renderHelm(nil, map[string]any{"region": "us-east-1", "gateway.autoscaling.enabled": true})
	if err != nil {
		t.Fatal(err)
	}
	r := sortObjects("helm autoscaled", objs)
	checkWorkloads(t, r, 2)
	var hpa *autoscalingv2.HorizontalPodAutoscaler
	for _, o := range objs {
		if h, ok := o.(*autoscalingv2.HorizontalPodAutoscaler); ok {
			hpa = h
		}
	}
	if hpa == nil || len(r.statefulSets) != 1 {
		t.Fatal("want an HPA and a StatefulSet gateway")
	}
	if ref := hpa.Spec.ScaleTargetRef; ref.Kind != "StatefulSet" || ref.Name != r.statefulSets[0].Name {
		t.Errorf("the HPA scales %s %s, not the gateway StatefulSet", ref.Kind, ref.Name)
	}
	if len(r.pvcs) != 0 {
		t.Error("an autoscaled gateway must not share one PersistentVolumeClaim")
	}
}

// Values that cannot work stop the install with what to set.
func TestHelmChartRefusesWhatCannotWork(t *testing.T) {
	for _, c := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{}, "needs the AWS region: --set region="},
		{map[string]any{"region": "us-east-1", "destination": "amp"}, "needs amp.remoteWriteURL"},
		{map[string]any{"destination": "otlp"}, "needs otlp.endpoint"},
		{map[string]any{"destination": "datadog"}, `destination "datadog": use one of`},
		{map[string]any{"region": "us-east-1", "remediation.enabled": true, "remediation.mode": "auto"}, `remediation.mode "auto": use recommend`},
		{map[string]any{"region": "us-east-1", "insights.enabled": true, "gateway.autoscaling.enabled": true}, "insights.enabled with gateway.autoscaling.enabled"},
	} {
		_, err := renderHelmManifests(nil, c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.set, err, c.want)
		}
	}
}

// destinationValues: the least each destination needs.
var destinationValues = map[string]map[string]any{
	"cloudwatch-emf":  {"region": "us-east-1", "destination": "cloudwatch-emf"},
	"cloudwatch-otlp": {"region": "us-east-1", "destination": "cloudwatch-otlp"},
	"amp": {"region": "us-east-1", "destination": "amp",
		"amp.remoteWriteURL": "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1/api/v1/remote_write"},
	"prometheus": {"destination": "prometheus"},
	"otlp":       {"destination": "otlp", "otlp.endpoint": "backend.example:4317"},
}

// gatewayStack renders the chart and returns the gateway container and the
// config stack it runs, as the collector merges it.
func gatewayStack(t *testing.T, set map[string]any) (rendered, corev1.Container, stack) {
	t.Helper()
	objs, _, err := renderHelm(nil, set)
	if err != nil {
		t.Fatal(err)
	}
	r := sortObjects(fmt.Sprintf("helm %v", set), objs)
	checkWorkloads(t, r, 2)
	c, _ := findContainer(gatewaySpec(t, r), "otelcol-accel")
	cm := r.configMaps["otelcol-accel-gateway"]
	if cm == nil {
		t.Fatal("no ConfigMap otelcol-accel-gateway")
	}
	var configs []map[string]any
	for _, f := range configArgs(c) {
		cfg, err := parseConfig(path.Base(f), cm.Data[path.Base(f)])
		if err != nil {
			t.Fatal(err)
		}
		configs = append(configs, cfg)
	}
	return r, c, stack{cfg: mergeConfigs(configs), env: containerEnv(c)}
}

// The otlp destination runs gateway.yaml with otlp.yaml on top: the
// backend's address from the values, and both signals through an exporter
// whose queue is on the gateway's volume (checkWorkloads checks every
// exporter's queue; here, that the backend's exporter is the one in use).
func TestHelmOTLPDestinationQueuesOnDisk(t *testing.T) {
	_, c, s := gatewayStack(t, map[string]any{"destination": "otlp", "otlp.endpoint": "datadog-agent.datadog.svc:4317", "otlp.insecure": false})
	if got, want := configArgs(c), []string{"/etc/otelcol-accel/gateway.yaml", "/etc/otelcol-accel/otlp.yaml"}; !slices.Equal(got, want) {
		t.Errorf("the otlp gateway runs %v, want %v", got, want)
	}
	if got := s.pipelineExporters()["otlp_grpc/backend"]; !slices.Equal(got, []string{"logs", "metrics"}) {
		t.Errorf("otlp_grpc/backend is in pipelines %v, want logs and metrics", got)
	}
	if got := s.str("exporters", "otlp_grpc/backend", "endpoint"); got != "datadog-agent.datadog.svc:4317" {
		t.Errorf("the backend exporter sends to %q", got)
	}
	if got := s.str("exporters", "otlp_grpc/backend", "tls", "insecure"); got != "false" {
		t.Errorf("otlp.insecure=false gave tls.insecure %q", got)
	}
	if got := s.str("exporters", "otlp_grpc/backend", "sending_queue", "storage"); got == "" {
		t.Error("the backend exporter's queue is not persistent")
	}
	for _, p := range []string{"metrics", "logs"} {
		if slices.Contains(s.list("service", "pipelines", p, "processors"), "batch") {
			t.Errorf("pipeline %s batches in memory in front of the persistent queue", p)
		}
	}
}

// insights.enabled adds config/insights.yaml to every destination's gateway:
// the console in its own metrics and logs pipelines, listening on all
// interfaces for the insights Service, its decisions on the queue volume
// (checkWorkloads → checkInsights and queueProblems check the details).
func TestHelmInsightsConsoleOnEveryDestination(t *testing.T) {
	for dest, vals := range destinationValues {
		t.Run(dest, func(t *testing.T) {
			set := map[string]any{"insights.enabled": true, "insights.port": 9686}
			for k, v := range vals {
				set[k] = v
			}
			r, c, s := gatewayStack(t, set)
			args := configArgs(c)
			if len(args) == 0 || args[len(args)-1] != "/etc/otelcol-accel/insights.yaml" {
				t.Errorf("the gateway runs %v, not insights.yaml last", args)
			}
			if got := s.pipelineExporters()["accelerator_insights"]; len(got) != 2 {
				t.Errorf("accelerator_insights is in pipelines %v", got)
			}
			// The destination's own pipelines are untouched by the layer.
			without := map[string]any{}
			for k, v := range vals {
				without[k] = v
			}
			_, _, base := gatewayStack(t, without)
			for _, p := range []string{"metrics", "logs"} {
				if got, want := s.list("service", "pipelines", p, "exporters"), base.list("service", "pipelines", p, "exporters"); !slices.Equal(got, want) {
					t.Errorf("pipeline %s exports to %v with the console, %v without", p, got, want)
				}
			}
			if got := s.str("exporters", "accelerator_insights", "endpoint"); got != "0.0.0.0:9686" {
				t.Errorf("the console listens on %q", got)
			}
			var svc *corev1.Service
			for _, sv := range r.services {
				if sv.Name == "otelcol-accel-insights" {
					svc = sv
				}
			}
			if svc == nil || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 9686 || svc.Spec.Ports[0].TargetPort.String() != "insights" {
				t.Fatalf("no insights Service on 9686 targeting the insights port: %s", js(svc))
			}
			if svc.Spec.Type != "" && svc.Spec.Type != corev1.ServiceTypeClusterIP {
				t.Errorf("the insights Service is %s; the console has no login and stays inside the cluster", svc.Spec.Type)
			}
		})
	}
}

// With the monitoring switches on, the PrometheusRule is the shipped alert
// rules and the PodMonitor scrapes the telemetry port every collector opens.
func TestHelmMonitoringObjects(t *testing.T) {
	objs, operator, err := renderHelm(nil, map[string]any{"destination": "prometheus", "podMonitor.enabled": true, "prometheusRule.enabled": true})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]operatorObject{}
	for _, o := range operator {
		kinds[o.Kind] = o
	}
	rule, ok := kinds["PrometheusRule"]
	if !ok || len(rule.Spec.Groups) == 0 {
		t.Fatal("no PrometheusRule with rule groups")
	}
	alerts := 0
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				alerts++
			}
		}
	}
	if alerts < 10 {
		t.Errorf("the PrometheusRule holds %d alerts", alerts)
	}
	pm, ok := kinds["PodMonitor"]
	if !ok || len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatal("no PodMonitor")
	}
	port := pm.Spec.PodMetricsEndpoints[0].Port
	r := sortObjects("helm monitoring", objs)
	specs := podSpecs(r.daemonSets, r.deployments)
	for name, spec := range specs {
		c, _ := findContainer(spec, "otelcol-accel")
		if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == port }) {
			t.Errorf("%s opens no port %s for the PodMonitor", name, port)
		}
		labels := map[string]string{}
		switch {
		case strings.HasPrefix(name, "DaemonSet/"):
			for _, d := range r.daemonSets {
				if "DaemonSet/"+d.Name == name {
					labels = d.Spec.Template.Labels
				}
			}
		default:
			labels = r.deployments[0].Spec.Template.Labels
		}
		for k, v := range pm.Spec.Selector.MatchLabels {
			if labels[k] != v {
				t.Errorf("the PodMonitor does not select %s (%s=%s)", name, k, v)
			}
		}
	}
}

// remediation.enabled: the gateway runs remediation.yaml as the remediator's
// own account (the drift test compares its roles with overlays/remediation);
// off, nothing of it is rendered and the gateway keeps the agents' account.
func TestHelmRemediation(t *testing.T) {
	role := map[string]any{"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/otelcol-accel"}
	r, c, s := gatewayStack(t, map[string]any{"region": "us-east-1", "remediation.enabled": true, "serviceAccount.annotations": role})
	spec := gatewaySpec(t, r)
	if spec.ServiceAccountName != "otelcol-accel-remediator" {
		t.Errorf("the gateway runs as %q, want the remediator's account", spec.ServiceAccountName)
	}
	for _, d := range r.daemonSets {
		if d.Spec.Template.Spec.ServiceAccountName != "otelcol-accel" {
			t.Errorf("agent %s runs as %q, want the read-only account", d.Name, d.Spec.Template.Spec.ServiceAccountName)
		}
	}
	if got, want := configArgs(c), []string{"/etc/otelcol-accel/cloudwatch-emf.yaml", "/etc/otelcol-accel/remediation.yaml"}; !slices.Equal(got, want) {
		t.Errorf("the gateway runs %v, want %v", got, want)
	}
	// The chart's default mode tells and disturbs nothing.
	if got := s.str("exporters", "accelerator_remediation", "mode"); got != "recommend" {
		t.Errorf("mode %q, want the chart's default recommend", got)
	}
	// Health events are logs: it must be in a logs pipeline the agents feed.
	inLogs := false
	for _, p := range s.pipelineExporters()["accelerator_remediation"] {
		if componentType(p) == "logs" && slices.Contains(s.list("service", "pipelines", p, "receivers"), "otlp") {
			inLogs = true
		}
	}
	if !inLogs {
		t.Errorf("accelerator_remediation is in pipelines %v, none a logs pipeline reading the OTLP receiver", s.pipelineExporters()["accelerator_remediation"])
	}
	// One replica acts: the Lease is in the namespace the Role grants it.
	if v, _ := lookupExact(s.cfg, "exporters", "accelerator_remediation", "leader_election", "enabled"); v != true {
		t.Error("leader election is off: autoscaled gateways would all act")
	}
	ns := ""
	for _, e := range c.Env {
		if e.Name == "OTELCOL_ACCEL_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			ns = helmRelease.Namespace
		}
	}
	if ns == "" || len(r.roles) != 1 || r.roles[0].Namespace != ns {
		t.Errorf("the Lease namespace (OTELCOL_ACCEL_NAMESPACE from the pod's namespace) and the Lease Role differ: %s", js(r.roles))
	}
	// It sends to CloudWatch as the remediator: the IAM role is on its account.
	for _, a := range r.accounts {
		if a.Annotations["eks.amazonaws.com/role-arn"] != role["eks.amazonaws.com/role-arn"] {
			t.Errorf("ServiceAccount %s lacks the gateway's IRSA role", a.Name)
		}
	}

	// Autoscaled, every replica runs the remediator: plans are shared
	// through ConfigMaps and only the Lease holder acts (docs/remediation.md),
	// so each replica needs the Role as well as the account.
	r, _, s = gatewayStack(t, map[string]any{"region": "us-east-1", "remediation.enabled": true, "gateway.autoscaling.enabled": true})
	if len(r.statefulSets) != 1 || gatewaySpec(t, r).ServiceAccountName != "otelcol-accel-remediator" {
		t.Errorf("autoscaled: the gateway StatefulSet does not run as the remediator's account")
	}
	if v, _ := lookupExact(s.cfg, "exporters", "accelerator_remediation", "leader_election", "enabled"); v != true {
		t.Error("autoscaled: leader election is off, every replica would act")
	}
	shared := map[string]bool{}
	for _, role := range r.roles {
		for _, rule := range role.Rules {
			for _, res := range rule.Resources {
				shared[res] = true
			}
		}
	}
	if !shared["leases"] || !shared["configmaps"] {
		t.Errorf("autoscaled: the replicas' Role grants %v, want the Lease and the plans' ConfigMaps", shared)
	}

	r, c, _ = gatewayStack(t, map[string]any{"region": "us-east-1"})
	if len(r.roles) != 0 || len(r.clusterRoles) != 1 || len(r.accounts) != 1 || gatewaySpec(t, r).ServiceAccountName != "otelcol-accel" {
		t.Errorf("remediation off still renders its parts: %d Roles, %d ClusterRoles, %d ServiceAccounts", len(r.roles), len(r.clusterRoles), len(r.accounts))
	}
	if slices.Contains(configArgs(c), "/etc/otelcol-accel/remediation.yaml") {
		t.Error("remediation off still runs remediation.yaml")
	}
}
