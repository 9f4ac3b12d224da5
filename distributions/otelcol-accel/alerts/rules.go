// Package alerts holds the Prometheus alert rules shipped with otelcol-accel:
// what an operator pages on, in the names the gateway's prometheus exporter
// gives our schema (docs/metrics.md). This file is their one source; the
// plain rules file and the Prometheus Operator's PrometheusRule are
// generated from it (`make manifests`), and the tests keep them identical,
// check every metric against internal/accelschema and run promtool on
// series that must fire and series that must not.
//
// Actions come from internal/xid: the fatal-XID rules are one per action,
// over the XIDs the catalogue classifies as failed; the condition rules take
// the action of their condition.
package alerts

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Group is a Prometheus rule group.
type Group struct {
	Name     string `yaml:"name"`
	Interval string `yaml:"interval,omitempty"`
	Rules    []Rule `yaml:"rules"`
}

// Rule is an alerting or recording rule.
type Rule struct {
	Record      string            `yaml:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// Thresholds an operator may want to change; docs/alerts.md says how.
const (
	// WastePerTeamUSDPerHour is the spend per hour that bought nothing
	// above which a team is told.
	WastePerTeamUSDPerHour = 20
	// TTFTObjectiveSeconds and ITLObjectiveSeconds are latency bounds that
	// are bucket boundaries in both vLLM's and SGLang's histograms, so
	// "faster than the bound" is an exact bucket count.
	TTFTObjectiveSeconds = "1"
	ITLObjectiveSeconds  = "0.1"
	// SLOTarget is the fraction of requests that must meet the bound.
	SLOTarget = 0.99
	// XIDWindow is how far back a new fatal XID counts.
	XIDWindow = "10m"
)

// Device, node and endpoint labels the alerts keep.
const (
	deviceBy   = "k8s_cluster_name, k8s_node_name, hw_id, hw_model"
	endpointBy = "k8s_cluster_name, k8s_namespace_name, accelerator_workload_name, gen_ai_request_model"
	where      = "{{ $labels.hw_id }} ({{ $labels.hw_model }}) on node {{ $labels.k8s_node_name }} in {{ $labels.k8s_cluster_name }}"
	endpoint   = "{{ $labels.accelerator_workload_name }} ({{ $labels.gen_ai_request_model }}) in {{ $labels.k8s_namespace_name }}, {{ $labels.k8s_cluster_name }}"
)

// Groups returns every rule group.
func Groups() []Group {
	return []Group{health(), telemetry(), cost(), slo()}
}

// runbook names the action, in our vocabulary and in words.
func runbook(action, then string) string {
	s := "Action: " + action + " (" + meaning(action) + ")."
	if then != "" {
		s += " " + then
	}
	return s
}

func meaning(action string) string {
	for _, v := range as.EnumAction.Values {
		if v.Value == action {
			return v.Brief
		}
	}
	return "not a value of " + as.EnumAction.Name
}

// appeared matches a counter series that grew within the window, or that
// is new in it while its device was already watched: increase() alone
// misses the first event of an XID code, whose series starts at 1. The
// device's hw_status a window ago keeps a fresh Prometheus (or a new node)
// from paging on counts from before it looked.
func appeared(selector, window string) string {
	return fmt.Sprintf("(increase(%[1]s[%[2]s]) > 0) or (((%[1]s > 0) unless %[1]s offset %[2]s) and on (hw_id) (hw_status offset %[2]s))", selector, window)
}

func health() Group {
	g := Group{Name: "otelcol-accel-health"}
	lost := xid.ForCondition(xid.DeviceLost).Action
	g.Rules = append(g.Rules, Rule{
		Alert:  "AcceleratorDeviceFailed",
		Expr:   fmt.Sprintf(`max by (%s) (hw_status{hw_state="failed"}) == 1`, deviceBy),
		For:    "2m",
		Labels: map[string]string{"severity": "critical"},
		Annotations: map[string]string{
			"summary":     "Accelerator failed or lost",
			"description": "Device " + where + " is in state failed (fallen off the bus, uncontained error or another fatal health event); the work on it is lost and it is booked as waste (unavailable).",
			"runbook": "Action: the one on the health event that failed the device (accelerator.health.action on its log record; the AcceleratorFatalXID alert beside this one names it for an XID); for a lost GPU, " +
				lost + " (" + meaning(lost) + "). Cordon the node first.",
		},
	})
	for _, action := range fatalActions() {
		codes := fatalXIDs(action)
		sel := fmt.Sprintf(`hw_errors_total{error_type="xid", accelerator_xid=~"%s"}`, strings.Join(codes, "|"))
		g.Rules = append(g.Rules, Rule{
			Alert:  "AcceleratorFatalXID",
			Expr:   fmt.Sprintf(`max by (%s, accelerator_xid) (%s)`, deviceBy, appeared(sel, XIDWindow)),
			Labels: map[string]string{"severity": "critical", "action": action},
			Annotations: map[string]string{
				"summary":     "Fatal XID {{ $labels.accelerator_xid }} on an NVIDIA GPU",
				"description": "XID {{ $labels.accelerator_xid }} on " + where + " in the last " + XIDWindow + ": internal/xid classifies it as failed (XIDs " + strings.Join(codes, ", ") + ").",
				"runbook":     runbook(action, drainFirst(action)),
			},
		})
	}
	remapFailed, remapPending := xid.ForCondition(xid.RowRemapFailed), xid.ForCondition(xid.RowRemapPending)
	g.Rules = append(g.Rules,
		Rule{
			Alert:  "AcceleratorRowRemapFailed",
			Expr:   fmt.Sprintf(`max by (%s) (accelerator_memory_row_remap_failed_ratio) == 1`, deviceBy),
			Labels: map[string]string{"severity": "critical", "action": remapFailed.Action},
			Annotations: map[string]string{
				"summary":     "GPU row remap failed",
				"description": "A memory row remap failed on " + where + ": " + remapFailed.Description + ".",
				"runbook":     runbook(remapFailed.Action, "Drain the node's workloads from the GPU and open a replacement request with the device's serial or instance id."),
			},
		},
		Rule{
			Alert:  "AcceleratorRowRemapPendingTooLong",
			Expr:   fmt.Sprintf(`max by (%s) (accelerator_memory_row_remap_pending_ratio) == 1`, deviceBy),
			For:    "6h",
			Labels: map[string]string{"severity": "warning", "action": remapPending.Action},
			Annotations: map[string]string{
				"summary":     "GPU row remap pending for over 6 hours",
				"description": "A memory row remap has waited for a GPU reset for more than 6 hours on " + where + ": " + remapPending.Description + ".",
				"runbook":     runbook(remapPending.Action, "The remap takes effect only at the reset; until then the bad row stays mapped."),
			},
		},
	)
	mps := xid.ForCondition(xid.MPSDaemonDown)
	g.Rules = append(g.Rules, Rule{
		Alert:  "AcceleratorMPSDaemonDown",
		Expr:   `max by (k8s_cluster_name, k8s_node_name) (accelerator_mps_daemon_up_ratio) == 0`,
		For:    "5m",
		Labels: map[string]string{"severity": "warning", "action": mps.Action},
		Annotations: map[string]string{
			"summary":     "MPS control daemon down",
			"description": "The MPS control daemon on node {{ $labels.k8s_node_name }} in {{ $labels.k8s_cluster_name }} has not answered for 5 minutes: " + mps.Description + ".",
			"runbook":     runbook(mps.Action, "Restart the MPS control daemon (the NVIDIA device plugin's mps-control-daemon pod on that node)."),
		},
	})
	mem, sram := xid.ForCondition(xid.NeuronMemECCUncorrected), xid.ForCondition(xid.NeuronSRAMECCUncorrected)
	neuronSel := fmt.Sprintf(`hw_errors_total{hw_vendor="AWS", error_type=~"%s|%s"}`, as.ErrorECCUncorrected, as.ErrorSRAMECCUncorrected)
	g.Rules = append(g.Rules, Rule{
		Alert:  "NeuronUncorrectableECC",
		Expr:   fmt.Sprintf(`max by (%s, error_type) (%s)`, deviceBy, appeared(neuronSel, XIDWindow)),
		Labels: map[string]string{"severity": "critical", "action": mem.Action},
		Annotations: map[string]string{
			"summary":     "Uncorrectable ECC error on a Neuron device",
			"description": "{{ $labels.error_type }} on " + where + ": " + mem.Description + " (SRAM: " + sram.Description + ").",
			"runbook":     runbook(mem.Action, "Neuron devices are not replaced one by one: stop scheduling on the instance, drain it and replace it."),
		},
	})
	return g
}

func drainFirst(action string) string {
	if action == as.ActionRebootNode {
		return "Cordon and drain the node first: a reboot stops all its GPUs."
	}
	return "Drain the GPU's workloads first; the node's other GPUs keep working."
}

// fatalActions are the actions of the XIDs internal/xid classifies as failed.
func fatalActions() []string {
	var out []string
	for _, c := range fatalCatalogue() {
		if !slices.Contains(out, c.Action) {
			out = append(out, c.Action)
		}
	}
	slices.Sort(out)
	return out
}

func fatalXIDs(action string) []string {
	var out []string
	for _, c := range fatalCatalogue() {
		if c.Action == action {
			out = append(out, strconv.Itoa(c.Code))
		}
	}
	return out
}

// maxXID bounds the catalogue walk; NVIDIA's XIDs are below it.
const maxXID = 1024

func fatalCatalogue() []xid.Classification {
	var out []xid.Classification
	for code := 1; code < maxXID; code++ {
		if c := xid.Lookup(code); c.Known && c.State == as.HWStateFailed {
			out = append(out, c)
		}
	}
	return out
}

func telemetry() Group {
	// The collector's own telemetry (service.telemetry, :8888) names its
	// counters otelcol_<metadata.yaml key>, without a _total suffix; the
	// chart's PodMonitor scrapes it from every agent and the gateway.
	return Group{Name: "otelcol-accel-telemetry", Rules: []Rule{
		{
			Alert:  "AcceleratorCollectorDown",
			Expr:   `up{job=~".*otelcol-accel.*"} == 0`,
			For:    "5m",
			Labels: map[string]string{"severity": "warning"},
			Annotations: map[string]string{
				"summary":     "otelcol-accel collector not answering",
				"description": "Prometheus has not scraped {{ $labels.instance }} ({{ $labels.job }}) for 5 minutes: no accelerator data from that node, or none from the fleet if it is the gateway.",
				"runbook":     "Action: restart_service (the collector pod). Check the pod's events and its last log lines: a missing mount, socket or driver library is named there.",
			},
		},
		{
			Alert:  "AcceleratorSourceDown",
			Expr:   `sum by (job, instance, source) (rate(otelcol_receiver_dcgm_scrapes_failed[5m])) > 0`,
			For:    "10m",
			Labels: map[string]string{"severity": "warning"},
			Annotations: map[string]string{
				"summary":     "No GPU data from a node: {{ $labels.source }} unavailable",
				"description": "The dcgm receiver on {{ $labels.instance }} has failed every scrape for 10 minutes (source {{ $labels.source }}): NVML is not open or dcgm-exporter does not answer, so that node's GPUs are not watched.",
				"runbook":     "Action: restart_service. The agent logs what is missing (driver library path, kernel driver, dcgm-exporter endpoint); fix the mount or restart dcgm-exporter.",
			},
		},
		{
			Alert:  "NeuronSourceDown",
			Expr:   `sum by (job, instance) (rate(otelcol_receiver_neuron_scrapes_failed[5m])) > 0`,
			For:    "10m",
			Labels: map[string]string{"severity": "warning"},
			Annotations: map[string]string{
				"summary":     "No Neuron data from a node",
				"description": "The neuron receiver on {{ $labels.instance }} has failed its reads for 10 minutes: neuron-monitor's output is not arriving, so that node's Neuron devices are not watched.",
				"runbook":     "Action: restart_service (the agent's neuron-monitor container). Its stderr and exit status are in the agent's log.",
			},
		},
		{
			Alert:  "NeuronMonitorRestarting",
			Expr:   `sum by (job, instance) (increase(otelcol_receiver_neuron_monitor_restarts[15m])) > 3`,
			Labels: map[string]string{"severity": "warning"},
			Annotations: map[string]string{
				"summary":     "neuron-monitor keeps crashing",
				"description": "neuron-monitor was restarted more than 3 times in 15 minutes on {{ $labels.instance }}.",
				"runbook":     "Action: check the agent's log for neuron-monitor's stderr and exit status; a Neuron driver or tools mismatch is the usual cause (update aws-neuronx-tools to the driver's release).",
			},
		},
		{
			Alert:  "AcceleratorEMFEventsRejected",
			Expr:   `sum by (job, instance, reason) (increase(otelcol_exporter_emf_events_rejected[15m])) > 0`,
			Labels: map[string]string{"severity": "warning"},
			Annotations: map[string]string{
				"summary":     "CloudWatch rejected metric events ({{ $labels.reason }})",
				"description": "CloudWatch Logs rejected events from {{ $labels.instance }} in the last 15 minutes (reason {{ $labels.reason }}); they are dropped.",
				"runbook":     "Action: for too_old or too_new check the node clocks (chrony) and the gateway's queue backlog; for expired raise the log group's retention.",
			},
		},
	}}
}

func cost() Group {
	return Group{Name: "otelcol-accel-cost", Rules: []Rule{{
		Alert: "AcceleratorTeamWasteHigh",
		Expr: fmt.Sprintf(`sum by (k8s_cluster_name, accelerator_team) (rate(accelerator_waste_USD_total{accelerator_team!=""}[1h])) * 3600 > %d`,
			WastePerTeamUSDPerHour),
		For:    "1h",
		Labels: map[string]string{"severity": "info"},
		Annotations: map[string]string{
			"summary":     "Team {{ $labels.accelerator_team }} wastes over " + strconv.Itoa(WastePerTeamUSDPerHour) + " USD per hour",
			"description": "Accelerators held by team {{ $labels.accelerator_team }} in {{ $labels.k8s_cluster_name }} have bought nothing for {{ $value | printf \"%.2f\" }} USD per hour over the last hour.",
			"runbook":     "Action: open the team's cost findings (accelerator.findings by kind, the cost dashboard) and apply the action each names (accelerator.finding.action: release idle devices, right-size MIG profiles, scale inference replicas).",
		},
	}}}
}

// SLO burn: the multi-window, multi-burn-rate alerts of Google's SRE
// workbook over the share of requests slower than the bound.
type sloDef struct {
	name, family, bound, what string
}

var slos = []sloDef{
	{"ttft", "gen_ai_server_time_to_first_token_seconds", TTFTObjectiveSeconds, "time to first token"},
	{"itl", "gen_ai_server_inter_token_latency_seconds", ITLObjectiveSeconds, "inter-token latency"},
}

var burnWindows = []string{"5m", "30m", "1h", "6h"}

// leMatch matches a bucket bound however it is written: the exporter writes
// 1, Prometheus 3 normalises classic histograms' le to 1.0 when it scrapes.
func leMatch(bound string) string {
	re := strings.ReplaceAll(bound, ".", `\\.`)
	if !strings.Contains(bound, ".") {
		re += `|` + re + `\\.0`
	}
	return re
}

// SlowRatioRecord is the recording rule's name for an SLO and a window.
func SlowRatioRecord(slo, window string) string {
	return "endpoint:gen_ai_" + slo + "_slow:ratio_rate" + window
}

func slo() Group {
	g := Group{Name: "otelcol-accel-slo"}
	budget := 1 - SLOTarget
	for _, s := range slos {
		for _, w := range burnWindows {
			g.Rules = append(g.Rules, Rule{
				Record: SlowRatioRecord(s.name, w),
				Expr: fmt.Sprintf(`1 - sum by (%[1]s) (rate(%[2]s_bucket{le=~"%[3]s"}[%[4]s])) / sum by (%[1]s) (rate(%[2]s_count[%[4]s]))`,
					endpointBy, s.family, leMatch(s.bound), w),
			})
		}
		for _, b := range []struct {
			severity, long, short, forDur string
			burn                          float64
		}{
			{"critical", "1h", "5m", "2m", 14.4},
			{"warning", "6h", "30m", "15m", 6},
		} {
			threshold := strconv.FormatFloat(math.Round(b.burn*budget*1e6)/1e6, 'f', -1, 64)
			g.Rules = append(g.Rules, Rule{
				Alert:  "GenAI" + strings.ToUpper(s.name) + "SLOBurn",
				Expr:   fmt.Sprintf("%s > %s and %s > %s", SlowRatioRecord(s.name, b.long), threshold, SlowRatioRecord(s.name, b.short), threshold),
				For:    b.forDur,
				Labels: map[string]string{"severity": b.severity, "slo": s.name},
				Annotations: map[string]string{
					"summary": fmt.Sprintf("%s SLO burning %gx its budget", strings.ToUpper(s.name), b.burn),
					"description": fmt.Sprintf("%s: {{ $value | humanizePercentage }} of requests over the last %s had a %s above %s s (objective: %g%% within it); at this rate the 30-day error budget lasts %.1f days.",
						endpoint, b.long, s.what, s.bound, SLOTarget*100, 30/b.burn),
					"runbook": "Action: scale the endpoint out (more replicas or a larger device) or shed load; check its queue (gen_ai.server.requests.waiting), KV cache use and preemptions on the inference dashboard, and the devices it holds for a health event.",
				},
			})
		}
	}
	return g
}
