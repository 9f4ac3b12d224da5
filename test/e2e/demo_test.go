//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The demo topology (`make run`): every simulated device reaches the gateway
// with its holder, team, cost and waste; serving pods' latency series carry
// their team; the scheduled failures arrive as health events with actions;
// every kind of finding is raised; and the EMF file is well-formed.
func TestDemoFleetEndToEnd(t *testing.T) {
	fleet := e2etest.StartFleet(t, e2etest.FleetOptions{
		// 20× speed: row remap at 30 s, XID 48 at 60 s, Neuron ECC at 75 s,
		// XID 79 at 90 s, training degrading from 45 s (after its baseline
		// of 6 samples at 5 s has formed).
		Sim: e2etest.SimOptions{Speed: 20},
	})
	e2etest.Await(t, 4*time.Minute, "the demo's every expectation", func() (string, bool) {
		unmet := demoUnmet(t, fleet)
		return "still missing:\n  " + strings.Join(unmet, "\n  "), len(unmet) == 0
	})
}

// demoUnmet returns every expectation the gateway's output does not meet yet.
func demoUnmet(t *testing.T, fleet *e2etest.Fleet) []string {
	var unmet []string
	fams, err := e2etest.ScrapePrometheus(fleet.Gateway.PrometheusURL())
	if err != nil {
		return []string{"gateway /metrics: " + err.Error()}
	}
	price := series(fams, "accelerator_price_USD_per_hour")
	waste := series(fams, "accelerator_waste_USD_total")
	cost := series(fams, "accelerator_cost_USD_total")

	for _, node := range fleet.Sim.Endpoints.Nodes {
		for _, dev := range node.Devices {
			if !anyOnDevice(price, dev.ID) || !anyOnDevice(cost, dev.ID) || !anyOnDevice(waste, dev.ID) {
				unmet = append(unmet, fmt.Sprintf("%s %s has no price, cost and waste", node.Name, dev.ID))
			}
		}
		holding := holdingPods(node)
		for _, pod := range node.Pods {
			if !holding[pod.Name] {
				continue
			}
			if !anyWith(price, map[string]string{
				"k8s_pod_name": pod.Name, "k8s_namespace_name": pod.Namespace,
				"accelerator_team": pod.Team, "accelerator_workload_type": pod.WorkloadType,
			}) {
				unmet = append(unmet, fmt.Sprintf("pod %s/%s (team %s, %s) is on no priced device", pod.Namespace, pod.Name, pod.Team, pod.WorkloadType))
			}
		}
		for _, inf := range node.Inference {
			team := teamOf(node, inf.Pod)
			if !anyWith(series(fams, "gen_ai_server_time_to_first_token_seconds"), map[string]string{"k8s_pod_name": inf.Pod, "accelerator_team": team}) &&
				!anyWith(series(fams, "gen_ai_server_requests_running"), map[string]string{"k8s_pod_name": inf.Pod, "accelerator_team": team}) {
				unmet = append(unmet, fmt.Sprintf("inference server %s (%s) has no series with its team", inf.Pod, inf.Server))
			}
		}
	}
	for _, reason := range []string{"idle", "unallocated", "inference_underutilized", "fragmentation", "unavailable", "training_inefficiency"} {
		if e2etest.SumFamily(fams["accelerator_waste_USD_total"], "accelerator_waste_reason", reason) <= 0 {
			unmet = append(unmet, "no waste booked as "+reason)
		}
	}

	events := readEvents(t, filepath.Join(fleet.OutDir, "events.jsonl"))
	for _, want := range []struct{ what, event, key, value string }{
		{"XID 79 (fallen off the bus)", "accelerator.health.xid", "accelerator.xid", "79"},
		{"XID 48 (double-bit ECC)", "accelerator.health.xid", "accelerator.xid", "48"},
		{"row remap pending", "accelerator.health.row_remap", "hw.state", "degraded"},
		{"Neuron uncorrected ECC", "accelerator.health.neuron_hw_error", "accelerator.health.action", "replace_device"},
		{"rightsizing finding", "accelerator.finding", "accelerator.finding.kind", "rightsizing"},
		{"training efficiency finding", "accelerator.finding", "accelerator.finding.kind", "training_efficiency"},
		{"inference under capacity finding", "accelerator.finding", "accelerator.finding.kind", "inference_under_capacity"},
		{"unhealthy capacity finding", "accelerator.finding", "accelerator.finding.kind", "unhealthy_capacity"},
		// The simulated kernel logs (issue 22): XID 79 seen by dcgm-exporter
		// and the kernel log is one event naming both; the Neuron driver's
		// line comes from the kernel log.
		{"XID 79 from dcgm-exporter and the kernel log as one event", "accelerator.health.xid", "accelerator.health.sources", "dcgm_exporter,kernel_log"},
		{"Neuron hardware error from the kernel log", "accelerator.health.neuron_hw_error", "accelerator.health.sources", "kernel_log"},
	} {
		if !hasEvent(events, want.event, want.key, want.value) {
			unmet = append(unmet, "no event: "+want.what)
		}
	}
	xid79 := 0
	for _, ev := range events {
		if ev["event.name"] == "accelerator.health.xid" && fmt.Sprint(ev["accelerator.xid"]) == "79" {
			xid79++
		}
	}
	if xid79 > 1 {
		unmet = append(unmet, fmt.Sprintf("XID 79 happened once but is %d events", xid79))
	}
	for _, ev := range events {
		// Cost findings are about a device and what it costs; a
		// latency_regression (accelerator_diagnosis) is about an endpoint.
		if ev["event.name"] == "accelerator.finding" && ev["accelerator.finding.kind"] != "latency_regression" {
			if s, _ := ev["accelerator.finding.monthly_saving"].(float64); s <= 0 || ev["accelerator.finding.action"] == nil || ev["hw.id"] == nil {
				unmet = append(unmet, fmt.Sprintf("a finding without device, action or saving: %v", ev))
				break
			}
		}
	}

	emf := readEvents(t, filepath.Join(fleet.OutDir, "emf.jsonl"))
	if len(emf) == 0 {
		unmet = append(unmet, "no EMF documents written")
	}
	for _, doc := range emf {
		aws, ok := doc["_aws"].(map[string]any)
		if !ok || aws["Timestamp"] == nil || aws["CloudWatchMetrics"] == nil {
			unmet = append(unmet, fmt.Sprintf("an EMF document without _aws.Timestamp and CloudWatchMetrics: %v", doc))
			break
		}
	}
	sort.Strings(unmet)
	return unmet
}

func holdingPods(node endpoints.Node) map[string]bool {
	held := map[string]bool{}
	add := func(hs []endpoints.Holder) {
		for _, h := range hs {
			held[h.Pod] = true
		}
	}
	for _, d := range node.Devices {
		add(d.Holders)
		for _, m := range d.MIG {
			add(m.Holders)
		}
	}
	return held
}

func teamOf(node endpoints.Node, pod string) string {
	for _, p := range node.Pods {
		if p.Name == pod {
			return p.Team
		}
	}
	return ""
}

// series returns the metrics of a family; for a histogram family name the
// _bucket/_sum/_count suffixes are not needed.
func series(fams map[string]*dto.MetricFamily, name string) []*dto.Metric {
	if f, ok := fams[name]; ok {
		return f.GetMetric()
	}
	return nil
}

func anyOnDevice(ms []*dto.Metric, id string) bool {
	for _, m := range ms {
		if e2etest.Label(m, "hw_id") == id || e2etest.Label(m, "hw_parent") == id {
			return true
		}
	}
	return false
}

func matches(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		if e2etest.Label(m, k) != v {
			return false
		}
	}
	return true
}

func anyWith(ms []*dto.Metric, want map[string]string) bool {
	for _, m := range ms {
		if matches(m, want) {
			return true
		}
	}
	return false
}

// readEvents reads a JSON-lines file; a missing file is empty, a line being
// written is skipped.
func readEvents(t *testing.T, path string) []map[string]any {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 4<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

func hasEvent(events []map[string]any, name, key, value string) bool {
	for _, ev := range events {
		if ev["event.name"] == name && fmt.Sprint(ev[key]) == value {
			return true
		}
	}
	return false
}
