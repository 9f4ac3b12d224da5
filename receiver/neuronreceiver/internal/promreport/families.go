package promreport

import "strings"

// The families neuron-monitor-prometheus.py exports (aws-neuronx-tools,
// /opt/aws/neuron/bin/neuron-monitor-prometheus.py), one or a few per
// neuron-monitor metric group. Runtime families carry runtime_tag; every
// family carries the instance labels (instanceLabels). Counters come with a
// `<name>_created` gauge family (prometheus_client), used only to tell a
// reset counter from one that did not move.
const (
	// neuroncore_counters: {neuroncore} busy fraction.
	famCoreUtilization = "neuroncore_utilization_ratio"
	// memory_used: {memory_location=host|neuron_device} bytes, and one
	// family per category, neuroncore_memory_usage_<category>{neuroncore}
	// (memory_location="None" there).
	famRuntimeMemory    = "neuron_runtime_memory_used_bytes"
	famCoreMemoryPrefix = "neuroncore_memory_usage_"
	// neuron_runtime_vcpu_usage: {usage_type=user|system} fraction of a vCPU.
	famRuntimeVCPU = "neuron_runtime_vcpu_usage_ratio"
	// execution_stats: counters by error_type and status_type, and the
	// total_latency percentiles {percentile} (device_latency is not exported).
	famExecErrors = "execution_errors_total"
	famExecStatus = "execution_status_total"
	famLatency    = "execution_latency_seconds"
	// neuron_hw_counters: counter {event_type, neuron_device_index}; no
	// runtime_tag.
	famECC = "hardware_ecc_events_total"
	// prometheus_client Info metrics (value 1, data in labels).
	famInstance = "instance_info"        // Info('instance'): the instance labels
	famHardware = "neuron_hardware_info" // Info('neuron_hardware'): device and core counts, and the instance labels
)

// aliases are the same families under other names: the script's names
// before Neuron tools 2.5.16 renamed inference_stats to execution_stats, and
// the names CloudWatch Container Insights gives them when it scrapes the
// script (a Prometheus that federates such a scrape serves these).
var aliases = map[string]string{
	"inference_errors_total":                 famExecErrors,
	"inference_status_total":                 famExecStatus,
	"inference_latency_seconds":              famLatency,
	"neuron_execution_errors_total":          famExecErrors,
	"neuron_execution_status_total":          famExecStatus,
	"neuron_execution_latency_seconds":       famLatency,
	"neurondevice_hw_ecc_events_total":       famECC,
	"neurondevice_runtime_memory_used_bytes": famRuntimeMemory,
}

// coreMemoryCategories are the categories the script exports, one family
// each; it has the list built in, so no other category appears.
var coreMemoryCategories = []string{"constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors"}

// Labels of the script.
const (
	labelRuntimeTag     = "runtime_tag"
	labelPID            = "pid" // not exported by the script as shipped; read when present
	labelCore           = "neuroncore"
	labelMemoryLocation = "memory_location"
	labelUsageType      = "usage_type"
	labelErrorType      = "error_type"
	labelStatusType     = "status_type"
	labelPercentile     = "percentile"
	labelEventType      = "event_type"
	labelDeviceIndex    = "neuron_device_index"
	labelDeviceCount    = "neuron_device_count"
	labelCoresPerDevice = "neuroncore_per_device_count"
)

// Instance labels: instance_info of neuron-monitor's report, renamed by the
// script (instance_availability_zone → availability_zone, instance_region →
// region).
const (
	labelInstanceName = "instance_name"
	labelInstanceID   = "instance_id"
	labelInstanceType = "instance_type"
	labelZone         = "availability_zone"
	labelRegion       = "region"
	labelSubnetID     = "subnet_id"
)

// canonical returns the family a page's family name stands for, and
// whether it is one this package reads.
func canonical(name string) (string, bool) {
	if a, ok := aliases[name]; ok {
		return a, true
	}
	switch name {
	case famCoreUtilization, famRuntimeMemory, famRuntimeVCPU, famExecErrors, famExecStatus, famLatency, famECC, famInstance, famHardware:
		return name, true
	}
	if cat, ok := strings.CutPrefix(name, famCoreMemoryPrefix); ok && isCoreMemoryCategory(cat) {
		return name, true
	}
	return "", false
}

func isCoreMemoryCategory(cat string) bool {
	for _, c := range coreMemoryCategories {
		if c == cat {
			return true
		}
	}
	return false
}

// createdFamily is the `_created` family prometheus_client writes beside a
// counter: execution_status_total → execution_status_created.
func createdFamily(counter string) string {
	return strings.TrimSuffix(counter, "_total") + "_created"
}
