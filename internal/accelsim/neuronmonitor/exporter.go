package neuronmonitor

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"
)

// Exporter is neuron-monitor-prometheus.py, the Prometheus exporter that
// ships with neuron-monitor (`neuron-monitor | neuron-monitor-prometheus.py`,
// what AWS's neuron-monitor DaemonSet runs): it folds every report
// neuron-monitor writes into prometheus_client gauges and counters, and
// Render writes the page its HTTP server serves.
//
// It does what the script does, quirks included: instance labels taken from
// the first report; runtimes named by tag only; a group with an error left
// out (its series keep their last values); total latency only, and left at
// its last values when a period has none; counters that add each period's
// counts; every gauge and counter cleared when no runtime is left (so the
// ECC counters then hold one period's counts, with a new _created).
type Exporter struct {
	reg      *registry
	instance []label // get_instance_labels of the first report
	haveInfo bool    // instance_info and neuron_hardware_info are registered once
}

// NewExporter returns an exporter that has seen no report.
func NewExporter() *Exporter { return &Exporter{reg: newRegistry()} }

// Render appends the page as of the last report.
func (e *Exporter) Render(b []byte) []byte { return e.reg.render(b) }

// scriptReport is the part of a report the script reads.
type scriptReport struct {
	NeuronRuntimeData []struct {
		Tag    json.RawMessage            `json:"neuron_runtime_tag"`
		Error  string                     `json:"error"`
		Report map[string]json.RawMessage `json:"report"`
	} `json:"neuron_runtime_data"`
	SystemData   map[string]json.RawMessage `json:"system_data"`
	InstanceInfo map[string]any             `json:"instance_info"`
	HardwareInfo map[string]any             `json:"neuron_hardware_info"`
}

// Update takes in one report line as neuron-monitor wrote it at now.
func (e *Exporter) Update(doc []byte, now time.Time) error {
	var rep scriptReport
	if err := json.Unmarshal(doc, &rep); err != nil {
		return fmt.Errorf("neuron-monitor-prometheus: unable to decode JSON: %w", err)
	}
	t := float64(now.UnixNano()) / 1e9
	if e.instance == nil {
		e.instance = instanceLabels(rep.InstanceInfo)
	}
	if len(rep.NeuronRuntimeData) > 0 {
		for _, rt := range rep.NeuronRuntimeData {
			if rt.Error != "" {
				continue // "Runtime <tag> error: …" on stderr
			}
			labels := append(slices.Clone(e.instance), label{"runtime_tag", pyStr(rt.Tag)})
			for _, g := range runtimeGroupOrder {
				if raw, ok := rt.Report[g]; ok {
					e.group(g, raw, labels, t)
				}
			}
		}
	} else {
		// "Reset gauges if no neuron_runtime is running": counters too.
		for _, f := range e.reg.families {
			if f.typ != infoFamily {
				f.clear()
			}
		}
	}
	for _, g := range systemGroupOrder {
		if raw, ok := rep.SystemData[g]; ok {
			e.group(g, raw, e.instance, t)
		}
	}
	if !e.haveInfo {
		e.haveInfo = true
		e.reg.family("instance", "EC2 instance information", infoFamily).labels(t, e.instance...).value = 1
		if rep.HardwareInfo != nil {
			hw := append([]label{
				{"neuron_device_count", pyValue(rep.HardwareInfo["neuron_device_count"])},
				{"neuroncore_per_device_count", pyValue(rep.HardwareInfo["neuroncore_per_device_count"])},
			}, e.instance...)
			e.reg.family("neuron_hardware", "Neuron Hardware Information", infoFamily).labels(t, hw...).value = 1
		}
	}
	return nil
}

// The groups in the order neuron-monitor writes them, which is the order the
// script first meets (and registers) their families in.
var (
	runtimeGroupOrder = []string{GroupNeuronCoreCounters, GroupExecutionStats, GroupMemoryUsed, GroupRuntimeVCPU}
	systemGroupOrder  = []string{GroupHWCounters, GroupVCPUUsage, GroupMemoryInfo}
)

func instanceLabels(ii map[string]any) []label {
	get := func(k string) string { return pyValue(ii[k]) }
	return []label{
		{"instance_name", get("instance_name")},
		{"instance_id", get("instance_id")},
		{"instance_type", get("instance_type")},
		{"availability_zone", get("instance_availability_zone")},
		{"region", get("instance_region")},
		{"subnet_id", get("subnet_id")},
	}
}

// group is process_<group>: it runs only for a group without an error.
func (e *Exporter) group(name string, raw json.RawMessage, labels []label, t float64) {
	var env struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil || env.Error != "" {
		return // "Error getting <group> …" on stderr
	}
	with := func(extra ...label) []label { return append(slices.Clone(labels), extra...) }
	r := e.reg
	switch name {
	case GroupNeuronCoreCounters:
		var g ncCounters
		if json.Unmarshal(raw, &g) != nil {
			return
		}
		f := r.family("neuroncore_utilization_ratio", "NeuronCore utilization ratio", gaugeFamily)
		for _, c := range sortedKeys(g.InUse) {
			f.labels(t, with(label{"neuroncore", c})...).value = g.InUse[c].Utilization / 100
		}
	case GroupExecutionStats:
		var g struct {
			ErrorSummary     map[string]float64 `json:"error_summary"`
			ExecutionSummary map[string]float64 `json:"execution_summary"`
			LatencyStats     struct {
				Total map[string]float64 `json:"total_latency"`
			} `json:"latency_stats"`
		}
		if json.Unmarshal(raw, &g) != nil {
			return
		}
		f := r.family("execution_errors", "Execution errors total", counterFamily)
		for _, k := range ordered(g.ErrorSummary, errorSummaryOrder) {
			f.labels(t, with(label{"error_type", k})...).value += g.ErrorSummary[k]
		}
		f = r.family("execution_status", "Execution status total", counterFamily)
		for _, k := range ordered(g.ExecutionSummary, execSummaryOrder) {
			f.labels(t, with(label{"status_type", k})...).value += g.ExecutionSummary[k]
		}
		f = r.family("execution_latency_seconds", "Execution latency in seconds", gaugeFamily)
		if g.LatencyStats.Total != nil {
			for _, p := range ordered(g.LatencyStats.Total, percentileOrder) {
				f.labels(t, with(label{"percentile", p})...).value = g.LatencyStats.Total[p]
			}
		}
	case GroupMemoryUsed:
		var g struct {
			Used struct {
				Host         float64  `json:"host"`
				NeuronDevice *float64 `json:"neuron_device"`
				Device       *float64 `json:"device"`
				Breakdown    struct {
					Cores map[string]map[string]float64 `json:"neuroncore_memory_usage"`
				} `json:"usage_breakdown"`
			} `json:"neuron_runtime_used_bytes"`
		}
		if json.Unmarshal(raw, &g) != nil {
			return
		}
		device := g.Used.NeuronDevice
		if device == nil {
			device = g.Used.Device // the releases that print "device"
		}
		f := r.family("neuron_runtime_memory_used_bytes", "Runtime memory used bytes", gaugeFamily)
		f.labels(t, with(label{"memory_location", "host"})...).value = g.Used.Host
		if device != nil {
			f.labels(t, with(label{"memory_location", "neuron_device"})...).value = *device
		}
		for _, cat := range []string{"constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors"} {
			f := r.family("neuroncore_memory_usage_"+cat, "NeuronCore memory utilization for "+cat, gaugeFamily)
			for _, c := range sortedKeys(g.Used.Breakdown.Cores) {
				// memory_location is still Python's None here.
				f.labels(t, with(label{"memory_location", "None"}, label{"neuroncore", c})...).value = g.Used.Breakdown.Cores[c][cat]
			}
		}
	case GroupRuntimeVCPU:
		var g runtimeVCPU
		if json.Unmarshal(raw, &g) != nil {
			return
		}
		f := r.family("neuron_runtime_vcpu_usage_ratio", "Runtime vCPU utilization ratio", gaugeFamily)
		f.labels(t, with(label{"usage_type", "user"})...).value = g.VCPUUsage.User / 100
		f.labels(t, with(label{"usage_type", "system"})...).value = g.VCPUUsage.System / 100
	case GroupHWCounters:
		var g struct {
			Devices []map[string]float64 `json:"neuron_devices"`
		}
		if json.Unmarshal(raw, &g) != nil {
			return
		}
		f := r.family("hardware_ecc_events", "Hardware ecc events total", counterFamily)
		for _, d := range g.Devices {
			for _, k := range []string{"mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected", "sram_ecc_uncorrected"} {
				f.labels(t, with(label{"event_type", k}, label{"neuron_device_index", pyValue(d["neuron_device_index"])})...).value += d[k]
			}
		}
	case GroupVCPUUsage:
		var g sysVCPU
		if json.Unmarshal(raw, &g) != nil {
			return
		}
		r.family("system_vcpu_count", "System vCPU count", gaugeFamily).labels(t, labels...).value = float64(len(g.UsageData))
		a := g.AverageUsage
		f := r.family("system_vcpu_usage_ratio", "System CPU utilization ratio", gaugeFamily)
		f.labels(t, with(label{"usage_type", "user"})...).value = math.Min(a.User+a.Nice, 100) / 100
		f.labels(t, with(label{"usage_type", "system"})...).value = math.Min(a.System+a.IOWait+a.IRQ+a.SoftIRQ, 100) / 100
	case GroupMemoryInfo:
		var g memInfo
		if json.Unmarshal(raw, &g) != nil {
			return
		}
		for _, s := range []struct {
			name, help string
			v          int64
		}{
			{"system_memory_total_bytes", "System memory total_bytes bytes", g.MemoryTotalBytes},
			{"system_memory_used_bytes", "System memory used_bytes bytes", g.MemoryUsedBytes},
			{"system_swap_total_bytes", "System swap total_bytes bytes", g.SwapTotalBytes},
			{"system_swap_used_bytes", "System swap used_bytes bytes", g.SwapUsedBytes},
		} {
			r.family(s.name, s.help, gaugeFamily).labels(t, labels...).value = float64(s.v)
		}
	}
}

// The key orders of the objects neuron-monitor writes, which Python's dicts
// keep; keys a newer release adds follow, sorted.
var (
	errorSummaryOrder = []string{"generic", "numerical", "transient", "model", "runtime", "hardware"}
	execSummaryOrder  = []string{"completed", "completed_with_err", "completed_with_num_err", "timed_out", "incorrect_input", "failed_to_queue"}
	percentileOrder   = []string{"p0", "p1", "p25", "p50", "p75", "p99", "p100"}
)

func ordered(m map[string]float64, order []string) []string {
	out := make([]string, 0, len(m))
	for _, k := range order {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	if len(out) < len(m) {
		var extra []string
		for k := range m {
			if !slices.Contains(order, k) {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		out = append(out, extra...)
	}
	return out
}

// sortedKeys is the order encoding/json writes a map's keys in, which is
// the order neuron-monitor's (simulated) objects have.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pyValue is str() of a JSON value in Python: integers without a fraction,
// None for null.
func pyValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return pyRepr(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	return fmt.Sprint(v)
}

// pyStr is str() of a raw JSON value (the runtime tag is a string, or a
// number in some releases).
func pyStr(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "None"
	}
	return pyValue(v)
}
