// Package report is the JSON schema of one neuron-monitor report and its
// decoder.
//
// The schema follows the neuron-monitor user guide and real captures from
// inf1, inf2, trn1 and trn2 hosts. Every field is optional: older releases
// print fewer fields, and a metric group that neuron-monitor could not
// collect carries an "error" string instead of data. Each metric group is
// decoded on its own, so a group with an unexpected shape costs that group
// only, never the whole report.
package report

// Report is one neuron-monitor report.
type Report struct {
	// Runtimes is nil when neuron_runtime_data is null or absent.
	Runtimes     []Runtime
	System       System
	Instance     *InstanceInfo
	Hardware     *HardwareInfo
	RuntimesNull bool // neuron_runtime_data was null or absent
}

// Runtime is one entry of neuron_runtime_data: one Neuron application.
type Runtime struct {
	Index int // position in neuron_runtime_data, for error messages
	PID   int64
	Tag   string
	// Error is neuron-monitor's error for this runtime; when set the groups
	// are usually absent.
	Error string

	NeuronCoreCounters *NeuronCoreCounters
	ExecutionStats     *ExecutionStats
	MemoryUsed         *MemoryUsed
	VCPUUsage          *RuntimeVCPUUsage
}

// Group is the envelope every metric group shares.
type Group struct {
	// Period is the captured period in seconds (0 when absent).
	Period float64 `json:"period"`
	// Error is neuron-monitor's error for this group, empty when the data
	// is good.
	Error string `json:"error"`
}

// NeuronCoreCounters is the neuroncore_counters group.
type NeuronCoreCounters struct {
	Group
	// Cores is keyed by global NeuronCore index.
	Cores map[int]CoreCounters
}

// CoreCounters is one NeuronCore in neuroncores_in_use.
type CoreCounters struct {
	// Utilization is the fraction of the captured period the core was busy
	// (neuron-monitor prints a percentage; Decode divides it by 100, the
	// Prometheus exporter already has); nil when absent.
	Utilization *float64
	// Flops is floating-point operations per second over the captured
	// period: "flops" on current releases, "effective_flops" on the
	// releases between 2.7 and the rename; nil when absent.
	Flops *float64
}

// ExecutionStats is the execution_stats group (inference_stats before Neuron
// tools 2.5.16). Counts are for the captured period only.
type ExecutionStats struct {
	Group
	ErrorSummary     map[string]float64 `json:"error_summary"`
	ExecutionSummary map[string]float64 `json:"execution_summary"`
	// InferenceSummary is execution_summary under its pre-2.5.16 name.
	InferenceSummary map[string]float64 `json:"inference_summary"`
	LatencyStats     struct {
		// Total and Device are nil when no model ran in the period.
		Total  map[string]float64 `json:"total_latency"`
		Device map[string]float64 `json:"device_latency"`
	} `json:"latency_stats"`
}

// Outcomes returns execution_summary, or inference_summary on old releases.
func (e *ExecutionStats) Outcomes() map[string]float64 {
	if e.ExecutionSummary != nil {
		return e.ExecutionSummary
	}
	return e.InferenceSummary
}

// MemoryUsed is the memory_used group.
type MemoryUsed struct {
	Group
	// HostBytes and DeviceBytes are nil when absent. DeviceBytes reads
	// "neuron_device", or "device" as some releases print it.
	HostBytes   *float64
	DeviceBytes *float64
	// CoreMemory is usage_breakdown.neuroncore_memory_usage: global core
	// index → category → bytes.
	CoreMemory map[int]map[string]float64
	// ModelCores are the NeuronCores the loaded models' subgraphs sit on.
	ModelCores []int
}

// RuntimeVCPUUsage is the neuron_runtime_vcpu_usage group.
type RuntimeVCPUUsage struct {
	Group
	// User and System are the vCPU time the runtime used, as a fraction of
	// one vCPU (neuron-monitor prints percentages; Decode divides them by
	// 100). nil when absent; above 1 when the runtime's threads use more
	// than one vCPU.
	User, System *float64
}

// System is system_data. Only neuron_hw_counters is mapped; vcpu_usage and
// memory_info describe the host, which host metrics receivers cover.
type System struct {
	HWCounters *HWCounters
}

// HWCounters is the neuron_hw_counters group.
type HWCounters struct {
	Group
	Devices []DeviceCounters `json:"neuron_devices"`
}

// DeviceCounters holds one device's ECC events over the captured period.
type DeviceCounters struct {
	Index              *float64 `json:"neuron_device_index"`
	MemECCCorrected    *float64 `json:"mem_ecc_corrected"`
	MemECCUncorrected  *float64 `json:"mem_ecc_uncorrected"`
	SRAMECCCorrected   *float64 `json:"sram_ecc_corrected"`
	SRAMECCUncorrected *float64 `json:"sram_ecc_uncorrected"`
}

// InstanceInfo is instance_info.
type InstanceInfo struct {
	Name               string `json:"instance_name"`
	ID                 string `json:"instance_id"`
	Type               string `json:"instance_type"`
	AvailabilityZone   string `json:"instance_availability_zone"`
	AvailabilityZoneID string `json:"instance_availability_zone_id"`
	Region             string `json:"instance_region"`
	AMIID              string `json:"ami_id"`
	SubnetID           string `json:"subnet_id"`
	Error              string `json:"error"`
}

// HardwareInfo is neuron_hardware_info. Releases before Trn2 print only the
// two counts and error.
type HardwareInfo struct {
	DeviceType              string   `json:"neuron_device_type"`
	DeviceVersion           string   `json:"neuron_device_version"`
	NeuronCoreVersion       string   `json:"neuroncore_version"`
	DeviceCount             *float64 `json:"neuron_device_count"`
	DeviceMemorySize        *float64 `json:"neuron_device_memory_size"`
	NeuronCorePerDevice     *float64 `json:"neuroncore_per_device_count"`
	LogicalNeuronCoreConfig *float64 `json:"logical_neuroncore_config"`
	Error                   string   `json:"error"`
}
