//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/kubeapi"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The demo's gateway, as `make run` layers it (gateway.yaml +
// demo-gateway.yaml + k8s-reliability.yaml, the simulator's kubeconfig),
// reports the simulator's reliability story from its Kubernetes API: the
// cold-start phases as histograms, the HPA-decided scale-up with its
// decision-to-ready time, replicas per zone and the zone-imbalance finding,
// and the GPU pod no node can hold, from the scheduler and from Karpenter.
// Built binary and `accelsim serve`, nothing in between.
func TestDemoGatewayReportsTheReliabilityStory(t *testing.T) {
	sim := e2etest.StartAccelsim(t, e2etest.SimOptions{Speed: 20})
	out := t.TempDir()
	gw := e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: []string{e2etest.ConfigPath("gateway.yaml"), e2etest.ConfigPath("demo-gateway.yaml"), e2etest.ConfigPath("k8s-reliability.yaml")},
		Env: []string{"OTELCOL_ACCEL_DEMO_DIR=" + out, "OTELCOL_ACCEL_K8S_AUTH=kubeConfig",
			"OTELCOL_ACCEL_KUBECONFIG=" + sim.Endpoints.Kubeconfig, "OTELCOL_ACCEL_K8S_INTERVAL=2s",
			"OTELCOL_ACCEL_INSIGHTS_ENDPOINT=" + e2etest.FreeEndpoint(t)},
	})
	events := filepath.Join(out, "events.jsonl")

	// The story starts 15 s after the simulator (accelsim serve's default
	// --story-delay) and lasts 160 simulated seconds (8 s at 20x).
	wantLines := map[string][]string{
		"cold start":     {`accelerator.k8s.cold_start`, `"accelerator.cold_start.image_pull.duration":42.1`, kubeapi.StoryDeployment},
		"scale-up":       {`accelerator.k8s.scaling`, `"accelerator.scaling.decision_to_ready":109`, `"accelerator.scaling.decided_by":"hpa"`},
		"HPA decision":   {`accelerator.k8s.autoscaler`, `"accelerator.autoscaler.desired_replicas":3`},
		"group scaling":  {`accelerator.k8s.scaling`, kubeapi.StoryLeaderWorkerSet},
		"zone imbalance": {`zone_imbalance`, kubeapi.StoryDeployment, `=3`},
		"scheduler":      {`accelerator.k8s.unschedulable`, `FailedScheduling`, kubeapi.StoryUnschedulable},
		"Karpenter":      {`accelerator.k8s.unschedulable`, `InsufficientCapacity`, kubeapi.StoryNodeClaim},
	}
	found := map[string]bool{}
	var families map[string]*dto.MetricFamily
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		raw, _ := os.ReadFile(events)
		for _, line := range strings.Split(string(raw), "\n") {
			for what, subs := range wantLines {
				all := true
				for _, s := range subs {
					if !strings.Contains(line, s) {
						all = false
						break
					}
				}
				if all {
					found[what] = true
				}
			}
		}
		families, _ = e2etest.ScrapePrometheus(gw.PrometheusURL())
		if len(found) == len(wantLines) && metricsComplete(families) == "" {
			break
		}
		time.Sleep(time.Second)
	}
	for what := range wantLines {
		if !found[what] {
			t.Errorf("no %s record in %s (want a line with %q)", what, events, wantLines[what])
		}
	}
	if missing := metricsComplete(families); missing != "" {
		t.Errorf("the gateway's Prometheus exporter lacks %s", missing)
	}
	if t.Failed() {
		raw, _ := os.ReadFile(events)
		t.Logf("events.jsonl:\n%s\n---- gateway log ----\n%s", tailLines(string(raw), 40), gw.Output())
	}
}

// metricsComplete says what of the story is not among the families yet:
// every cold-start phase of the story's Deployment, its replicas in one
// zone, and the 16-GPU pod unschedulable from both sources.
func metricsComplete(families map[string]*dto.MetricFamily) string {
	phases := map[string]bool{}
	sources := map[string]bool{}
	replicas := false
	for name, f := range families {
		switch {
		case strings.HasPrefix(name, "accelerator_inference_cold_start_duration"):
			for _, m := range f.GetMetric() {
				if e2etest.Label(m, "accelerator_workload_name") == kubeapi.StoryDeployment && m.GetHistogram().GetSampleCount() > 0 {
					phases[e2etest.Label(m, "accelerator_cold_start_phase")] = true
				}
			}
		case strings.HasPrefix(name, "accelerator_k8s_pods_unschedulable"):
			for _, m := range f.GetMetric() {
				if e2etest.Label(m, "accelerator_capacity_resource") == "nvidia.com/gpu" && m.GetGauge().GetValue() > 0 {
					sources[e2etest.Label(m, "accelerator_capacity_source")] = true
				}
			}
		case strings.HasPrefix(name, "accelerator_k8s_workload_replicas"):
			for _, m := range f.GetMetric() {
				if e2etest.Label(m, "accelerator_workload_name") == kubeapi.StoryDeployment && m.GetGauge().GetValue() == 3 &&
					e2etest.Label(m, "cloud_availability_zone") != "" {
					replicas = true
				}
			}
		}
	}
	var missing []string
	for _, p := range []string{"scheduling", "image_pull", "container_start", "readiness", "total"} {
		if !phases[p] {
			missing = append(missing, "cold_start phase "+p)
		}
	}
	for _, s := range []string{"scheduler", "karpenter"} {
		if !sources[s] {
			missing = append(missing, "unschedulable from "+s)
		}
	}
	if !replicas {
		missing = append(missing, "3 replicas of "+kubeapi.StoryDeployment+" in one zone")
	}
	return strings.Join(missing, ", ")
}
