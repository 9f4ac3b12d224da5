package neuronmonitor

// The report schema, field for field as neuron-monitor writes it (user
// guide "The JSON output format"). Pointers and omitempty carry the
// differences between releases.

type report struct {
	// NeuronRuntimeData is null in legacy releases when no runtime runs.
	NeuronRuntimeData  []runtimeEntry `json:"neuron_runtime_data"`
	SystemData         systemData     `json:"system_data"`
	InstanceInfo       instanceInfo   `json:"instance_info"`
	NeuronHardwareInfo any            `json:"neuron_hardware_info"`
	NeuronK8sInfo      *k8sInfo       `json:"neuron_k8s_info,omitempty"`
}

type runtimeEntry struct {
	PID     int           `json:"pid"`
	Address string        `json:"address"`
	Tag     string        `json:"neuron_runtime_tag"`
	Error   string        `json:"error"`
	Report  runtimeReport `json:"report"`
}

type runtimeReport struct {
	NeuroncoreCounters *ncCounters  `json:"neuroncore_counters,omitempty"`
	ExecutionStats     *execStats   `json:"execution_stats,omitempty"`
	MemoryUsed         *memoryUsed  `json:"memory_used,omitempty"`
	RuntimeVCPU        *runtimeVCPU `json:"neuron_runtime_vcpu_usage,omitempty"`
}

type ncCounters struct {
	Period float64                `json:"period"`
	InUse  map[string]coreCounter `json:"neuroncores_in_use"`
	Error  string                 `json:"error"`
}

type coreCounter struct {
	Utilization    float64            `json:"neuroncore_utilization"`
	Flops          *int64             `json:"flops,omitempty"`
	EffectiveFlops *int64             `json:"effective_flops,omitempty"`
	V3D            map[string]v3dCore `json:"v3d,omitempty"`
}

type v3dCore struct {
	Utilization float64 `json:"neuroncore_utilization"`
}

type execStats struct {
	Period           float64      `json:"period"`
	ErrorSummary     errorSummary `json:"error_summary"`
	ExecutionSummary execSummary  `json:"execution_summary"`
	LatencyStats     latencyStats `json:"latency_stats"`
	Error            string       `json:"error"`
}

type errorSummary struct {
	Generic   int64 `json:"generic"`
	Numerical int64 `json:"numerical"`
	Transient int64 `json:"transient"`
	Model     int64 `json:"model"`
	Runtime   int64 `json:"runtime"`
	Hardware  int64 `json:"hardware"`
}

type execSummary struct {
	Completed           int64 `json:"completed"`
	CompletedWithErr    int64 `json:"completed_with_err"`
	CompletedWithNumErr int64 `json:"completed_with_num_err"`
	TimedOut            int64 `json:"timed_out"`
	IncorrectInput      int64 `json:"incorrect_input"`
	FailedToQueue       int64 `json:"failed_to_queue"`
}

type latencyStats struct {
	TotalLatency  *percentiles `json:"total_latency"`
	DeviceLatency *percentiles `json:"device_latency"`
}

type percentiles struct {
	P0   float64 `json:"p0"`
	P1   float64 `json:"p1"`
	P25  float64 `json:"p25"`
	P50  float64 `json:"p50"`
	P75  float64 `json:"p75"`
	P99  float64 `json:"p99"`
	P100 float64 `json:"p100"`
}

type memoryUsed struct {
	Period           float64       `json:"period"`
	RuntimeUsedBytes usedBytes     `json:"neuron_runtime_used_bytes"`
	LoadedModels     []loadedModel `json:"loaded_models"`
	Error            string        `json:"error"`
}

type usedBytes struct {
	Host int64 `json:"host"`
	// NeuronDevice is the current name; a real inf2 capture says "device".
	NeuronDevice   *int64    `json:"neuron_device,omitempty"`
	Device         *int64    `json:"device,omitempty"`
	UsageBreakdown breakdown `json:"usage_breakdown"`
}

type breakdown struct {
	Host                  hostMemory         `json:"host"`
	NeuroncoreMemoryUsage map[string]coreMem `json:"neuroncore_memory_usage"`
}

type hostMemory struct {
	ApplicationMemory int64 `json:"application_memory"`
	Constants         int64 `json:"constants"`
	DMABuffers        int64 `json:"dma_buffers"`
	Tensors           int64 `json:"tensors"`
}

type coreMem struct {
	Constants             int64 `json:"constants"`
	ModelCode             int64 `json:"model_code"`
	ModelSharedScratchpad int64 `json:"model_shared_scratchpad"`
	RuntimeMemory         int64 `json:"runtime_memory"`
	Tensors               int64 `json:"tensors"`
}

type loadedModel struct {
	Name      string              `json:"name"`
	UUID      string              `json:"uuid"`
	ModelID   int64               `json:"model_id"`
	IsRunning bool                `json:"is_running"`
	Subgraphs map[string]subgraph `json:"subgraphs"`
}

type subgraph struct {
	MemoryUsedBytes   subgraphMemory `json:"memory_used_bytes"`
	NeuroncoreIndex   int            `json:"neuroncore_index"`
	NeuronDeviceIndex int            `json:"neuron_device_index"`
}

type subgraphMemory struct {
	Host           int64             `json:"host"`
	NeuronDevice   int64             `json:"neuron_device"`
	UsageBreakdown subgraphBreakdown `json:"usage_breakdown"`
}

type subgraphBreakdown struct {
	Host         hostMemory   `json:"host"`
	NeuronDevice deviceMemory `json:"neuron_device"`
}

type deviceMemory struct {
	Constants     int64 `json:"constants"`
	ModelCode     int64 `json:"model_code"`
	RuntimeMemory int64 `json:"runtime_memory"`
	Tensors       int64 `json:"tensors"`
}

type runtimeVCPU struct {
	Period    float64 `json:"period"`
	VCPUUsage userSys `json:"vcpu_usage"`
	Error     string  `json:"error"`
}

type userSys struct {
	User   float64 `json:"user"`
	System float64 `json:"system"`
}

type systemData struct {
	NeuronHWCounters *hwCounters `json:"neuron_hw_counters,omitempty"`
	VCPUUsage        *sysVCPU    `json:"vcpu_usage,omitempty"`
	MemoryInfo       *memInfo    `json:"memory_info,omitempty"`
}

type hwCounters struct {
	Period        float64    `json:"period"`
	NeuronDevices []hwDevice `json:"neuron_devices"`
	Error         string     `json:"error"`
}

type hwDevice struct {
	NeuronDeviceIndex  int   `json:"neuron_device_index"`
	MemECCCorrected    int64 `json:"mem_ecc_corrected"`
	MemECCUncorrected  int64 `json:"mem_ecc_uncorrected"`
	SRAMECCUncorrected int64 `json:"sram_ecc_uncorrected"`
	SRAMECCCorrected   int64 `json:"sram_ecc_corrected"`
}

type sysVCPU struct {
	Period             float64             `json:"period"`
	AverageUsage       cpuUsage            `json:"average_usage"`
	UsageData          map[string]cpuUsage `json:"usage_data"`
	ContextSwitchCount int64               `json:"context_switch_count"`
	Error              string              `json:"error"`
}

type cpuUsage struct {
	User    float64 `json:"user"`
	Nice    float64 `json:"nice"`
	System  float64 `json:"system"`
	Idle    float64 `json:"idle"`
	IOWait  float64 `json:"io_wait"`
	IRQ     float64 `json:"irq"`
	SoftIRQ float64 `json:"soft_irq"`
}

type memInfo struct {
	Period           float64 `json:"period"`
	MemoryTotalBytes int64   `json:"memory_total_bytes"`
	MemoryUsedBytes  int64   `json:"memory_used_bytes"`
	SwapTotalBytes   int64   `json:"swap_total_bytes"`
	SwapUsedBytes    int64   `json:"swap_used_bytes"`
	Error            string  `json:"error"`
}

type instanceInfo struct {
	InstanceName     string `json:"instance_name"`
	InstanceID       string `json:"instance_id"`
	InstanceType     string `json:"instance_type"`
	AvailabilityZone string `json:"instance_availability_zone"`
	ZoneID           string `json:"instance_availability_zone_id"`
	Region           string `json:"instance_region"`
	AMIID            string `json:"ami_id"`
	SubnetID         string `json:"subnet_id"`
	Error            string `json:"error"`
}

type hardwareInfo struct {
	DeviceType        string `json:"neuron_device_type"`
	DeviceVersion     string `json:"neuron_device_version"`
	CoreVersion       string `json:"neuroncore_version"`
	DeviceCount       int    `json:"neuron_device_count"`
	DeviceMemorySize  int64  `json:"neuron_device_memory_size"`
	CoresPerDevice    int    `json:"neuroncore_per_device_count"`
	LogicalCoreConfig int    `json:"logical_neuroncore_config"`
	Error             string `json:"error"`
}

type legacyHardwareInfo struct {
	DeviceCount    int    `json:"neuron_device_count"`
	CoresPerDevice int    `json:"neuroncore_per_device_count"`
	Error          string `json:"error"`
}

type k8sInfo struct {
	Period      float64             `json:"period"`
	Neuroncores map[string]k8sEntry `json:"neuroncores_k8s_info"`
	Devices     map[string]k8sEntry `json:"neurondevices_k8s_info"`
	Error       string              `json:"error"`
}

type k8sEntry struct {
	PodName       string   `json:"pod_name"`
	Namespace     string   `json:"namespace"`
	ContainerName []string `json:"container_name"`
}
