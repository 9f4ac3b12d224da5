package accelschema

// Enum is a closed set of values for one attribute.
type Enum struct {
	Name   string
	Values []EnumValue
}

// EnumValue is one allowed value with what it means.
type EnumValue struct {
	Value string
	Brief string
}

// Has reports whether v is one of the enum's values.
func (e Enum) Has(v string) bool {
	for _, ev := range e.Values {
		if ev.Value == v {
			return true
		}
	}
	return false
}

// Outcomes of a GPU reset report (accelerator.remediation.outcome).
const (
	RemediationOutcomeSucceeded = "succeeded"
	RemediationOutcomeFailed    = "failed"
	RemediationOutcomeWaiting   = "waiting"
)

const (
	HWTypeGPU = "gpu"

	VendorNVIDIA = "NVIDIA"
	VendorAWS    = "AWS"

	KindNvidiaGPU = "nvidia_gpu"
	KindAWSNeuron = "aws_neuron"

	PartitionNone        = "none"
	PartitionMIG         = "mig"
	PartitionTimeSlicing = "time_slicing"
	PartitionMPS         = "mps"
	PartitionDRA         = "dra"
	PartitionNeuronCore  = "neuroncore"

	AllocationAllocated   = "allocated"
	AllocationUnallocated = "unallocated"
	AllocationReserved    = "reserved"

	WorkloadTraining    = "training"
	WorkloadInference   = "inference"
	WorkloadBatch       = "batch"
	WorkloadInteractive = "interactive"
	WorkloadUnknown     = "unknown"

	HWStateOK               = "ok"
	HWStateDegraded         = "degraded"
	HWStateFailed           = "failed"
	HWStatePredictedFailure = "predicted_failure"

	ErrorECCCorrected       = "ecc_corrected"
	ErrorECCUncorrected     = "ecc_uncorrected"
	ErrorSRAMECCCorrected   = "sram_ecc_corrected"
	ErrorSRAMECCUncorrected = "sram_ecc_uncorrected"
	ErrorXID                = "xid"
	ErrorPCIeReplay         = "pcie_replay"
	ErrorNVLinkCRC          = "nvlink_crc"
	ErrorNVLinkReplay       = "nvlink_replay"
	ErrorNVLinkRecovery     = "nvlink_recovery"
	ErrorExecGeneric        = "generic"
	ErrorExecNumerical      = "numerical"
	ErrorExecTransient      = "transient"
	ErrorExecModel          = "model"
	ErrorExecRuntime        = "runtime"
	ErrorExecHardware       = "hardware"

	DirectionReceive  = "receive"
	DirectionTransmit = "transmit"

	GPUTaskGeneral = "general"
	GPUTaskEncoder = "encoder"
	GPUTaskDecoder = "decoder"

	LinkPCIe   = "pcie"
	LinkNVLink = "nvlink"

	ClockSM     = "sm"
	ClockMemory = "memory"

	ThrottlePower       = "power"
	ThrottleThermal     = "thermal"
	ThrottleSyncBoost   = "sync_boost"
	ThrottleBoardLimit  = "board_limit"
	ThrottleLowUtil     = "low_utilization"
	ThrottleReliability = "reliability"
	ThrottleAppClocks   = "application_clocks"
	ThrottleSWPowerCap  = "sw_power_cap"
	ThrottleHWSlowdown  = "hw_slowdown"

	RetirementSingleBit = "single_bit_ecc"
	RetirementDoubleBit = "double_bit_ecc"
	RetirementPending   = "pending"

	RemapCorrectable   = "correctable"
	RemapUncorrectable = "uncorrectable"

	MemoryLocationHost   = "host"
	MemoryLocationDevice = "device"

	CPUModeUser   = "user"
	CPUModeSystem = "system"

	LatencyTotal  = "total"
	LatencyDevice = "device"

	ExecCompleted           = "completed"
	ExecCompletedWithErr    = "completed_with_err"
	ExecCompletedWithNumErr = "completed_with_num_err"
	ExecTimedOut            = "timed_out"
	ExecIncorrectInput      = "incorrect_input"
	ExecFailedToQueue       = "failed_to_queue"

	TokenInput  = "input"
	TokenOutput = "output"
	TokenCached = "cached"

	ServerVLLM   = "vllm"
	ServerSGLang = "sglang"
	ServerTriton = "triton"
	ServerTGI    = "tgi"
	ServerNIM    = "nim"

	WasteIdle                   = "idle"
	WasteUnallocated            = "unallocated"
	WasteOverprovisionedMemory  = "overprovisioned_memory"
	WasteTrainingInefficiency   = "training_inefficiency"
	WasteInferenceUnderutilized = "inference_underutilized"
	WasteUnavailable            = "unavailable"
	WasteFragmentation          = "fragmentation"

	FindingRightsizing            = "rightsizing"
	FindingTrainingEfficiency     = "training_efficiency"
	FindingInferenceUnderCapacity = "inference_under_capacity"
	FindingUnhealthyCapacity      = "unhealthy_capacity"

	FailureModeNone         = "none"
	FailureModeApplication  = "application"
	FailureModeMemory       = "memory"
	FailureModeHardware     = "hardware"
	FailureModeInterconnect = "interconnect"
	FailureModeDriver       = "driver"
	FailureModeDeviceLost   = "device_lost"
	FailureModePower        = "power"
	FailureModeThermal      = "thermal"
	FailureModeService      = "service"
	FailureModeUnknown      = "unknown"

	ActionNone           = "none"
	ActionMonitor        = "monitor"
	ActionRestartApp     = "restart_app"
	ActionResetGPU       = "reset_gpu"
	ActionDrainAndReset  = "drain_and_reset"
	ActionRebootNode     = "reboot_node"
	ActionReplaceDevice  = "replace_device"
	ActionCheckHardware  = "check_hardware"
	ActionRestartService = "restart_service"
	ActionContactSupport = "contact_support"
	ActionInvestigate    = "investigate"
)

var (
	EnumHWType = Enum{"hw.type", []EnumValue{{HWTypeGPU, "GPU or other accelerator device"}}}
	EnumKind   = Enum{"accelerator.kind", []EnumValue{
		{KindNvidiaGPU, "NVIDIA GPU or a partition of one"},
		{KindAWSNeuron, "AWS Inferentia or Trainium device or NeuronCore"},
	}}
	EnumPartitionType = Enum{"accelerator.partition.type", []EnumValue{
		{PartitionNone, "the whole device, held by at most one consumer"},
		{PartitionMIG, "a MIG GPU instance"},
		{PartitionTimeSlicing, "a time-sliced replica (`GPU-<uuid>::N`)"},
		{PartitionMPS, "an MPS share"},
		{PartitionDRA, "a DRA allocation (possibly shared by several consumers)"},
		{PartitionNeuronCore, "one NeuronCore of a Neuron device"},
	}}
	EnumAllocationState = Enum{"accelerator.allocation.state", []EnumValue{
		{AllocationAllocated, "held by a pod, task or job"},
		{AllocationUnallocated, "held by nobody"},
		{AllocationReserved, "held only by a scheduler's placeholder pod (e.g. Run:ai's `runai-reservation` namespace), not by a workload"},
	}}
	EnumWorkloadType = Enum{"accelerator.workload.type", []EnumValue{
		{WorkloadTraining, "model training"},
		{WorkloadInference, "model serving"},
		{WorkloadBatch, "batch or offline jobs"},
		{WorkloadInteractive, "notebooks, development pods"},
		{WorkloadUnknown, "not labelled and not inferable"},
	}}
	EnumHWState = Enum{"hw.state", []EnumValue{
		{HWStateOK, "healthy"},
		{HWStateDegraded, "usable but impaired (pending row remap, throttled by errors, contained XID)"},
		{HWStateFailed, "unusable until acted on (fallen off the bus, uncontained error)"},
		{HWStatePredictedFailure, "failing soon (remap failure, retired pages at limit)"},
	}}
	EnumErrorType = Enum{"error.type", []EnumValue{
		{ErrorECCCorrected, "corrected (single-bit) memory ECC errors, volatile"},
		{ErrorECCUncorrected, "uncorrected (double-bit) memory ECC errors, volatile"},
		{ErrorSRAMECCCorrected, "corrected SRAM ECC errors (Neuron)"},
		{ErrorSRAMECCUncorrected, "uncorrected SRAM ECC errors (Neuron)"},
		{ErrorXID, "XID events (see `accelerator.xid`)"},
		{ErrorPCIeReplay, "PCIe replays"},
		{ErrorNVLinkCRC, "NVLink CRC errors"},
		{ErrorNVLinkReplay, "NVLink replays"},
		{ErrorNVLinkRecovery, "NVLink recoveries"},
		{ErrorExecGeneric, "Neuron execution: generic"},
		{ErrorExecNumerical, "Neuron execution: numerical"},
		{ErrorExecTransient, "Neuron execution: transient"},
		{ErrorExecModel, "Neuron execution: model"},
		{ErrorExecRuntime, "Neuron execution: runtime"},
		{ErrorExecHardware, "Neuron execution: hardware"},
	}}
	EnumDirection      = Enum{"hw.direction", []EnumValue{{DirectionReceive, "into the device"}, {DirectionTransmit, "out of the device"}}}
	EnumGPUTask        = Enum{"hw.gpu.task", []EnumValue{{GPUTaskGeneral, "compute/graphics"}, {GPUTaskEncoder, "video encoder"}, {GPUTaskDecoder, "video decoder"}}}
	EnumLinkType       = Enum{"accelerator.link.type", []EnumValue{{LinkPCIe, "PCI Express"}, {LinkNVLink, "NVLink, all links"}}}
	EnumClockType      = Enum{"accelerator.clock.type", []EnumValue{{ClockSM, "streaming multiprocessor clock"}, {ClockMemory, "memory clock"}}}
	EnumThrottleReason = Enum{"accelerator.throttle.reason", []EnumValue{
		{ThrottlePower, "power cap (software or board)"},
		{ThrottleThermal, "thermal slowdown"},
		{ThrottleSyncBoost, "held to match other GPUs in a sync-boost group"},
		{ThrottleBoardLimit, "board limit"},
		{ThrottleLowUtil, "low utilization"},
		{ThrottleReliability, "reliability (voltage) limit"},
		{ThrottleAppClocks, "application clock setting"},
		{ThrottleSWPowerCap, "software power cap"},
		{ThrottleHWSlowdown, "hardware slowdown (power brake, overheating)"},
	}}
	EnumRetirementCause = Enum{"accelerator.memory.retirement.cause", []EnumValue{
		{RetirementSingleBit, "multiple single-bit ECC errors"},
		{RetirementDoubleBit, "a double-bit ECC error"},
		{RetirementPending, "retirement waiting for the next reset"},
	}}
	EnumRemapType       = Enum{"accelerator.memory.remap.type", []EnumValue{{RemapCorrectable, "remapped after correctable errors"}, {RemapUncorrectable, "remapped after uncorrectable errors"}}}
	EnumMemoryLocation  = Enum{"accelerator.memory.location", []EnumValue{{MemoryLocationHost, "host memory"}, {MemoryLocationDevice, "device memory"}}}
	EnumCPUMode         = Enum{"accelerator.cpu.mode", []EnumValue{{CPUModeUser, "user time"}, {CPUModeSystem, "system time"}}}
	EnumLatencyKind     = Enum{"accelerator.latency.kind", []EnumValue{{LatencyTotal, "end to end, as seen by the runtime"}, {LatencyDevice, "on the device"}}}
	EnumExecutionStatus = Enum{"accelerator.execution.status", []EnumValue{
		{ExecCompleted, "completed"},
		{ExecCompletedWithErr, "completed with an error"},
		{ExecCompletedWithNumErr, "completed with a numerical error"},
		{ExecTimedOut, "timed out"},
		{ExecIncorrectInput, "rejected: incorrect input"},
		{ExecFailedToQueue, "could not be queued"},
	}}
	EnumTokenType       = Enum{"gen_ai.token.type", []EnumValue{{TokenInput, "prompt tokens"}, {TokenOutput, "generated tokens"}, {TokenCached, "prompt tokens served from the prefix cache"}}}
	EnumInferenceServer = Enum{"gen_ai.provider.name", []EnumValue{
		{ServerVLLM, "vLLM"}, {ServerSGLang, "SGLang"}, {ServerTriton, "NVIDIA Triton"}, {ServerTGI, "Hugging Face TGI"}, {ServerNIM, "NVIDIA NIM for LLMs"},
	}}
	EnumWasteReason = Enum{"accelerator.waste.reason", []EnumValue{
		{WasteIdle, "allocated to a workload that does not use it"},
		{WasteUnallocated, "held by nobody"},
		{WasteOverprovisionedMemory, "memory held far above what the workload peaks at"},
		{WasteTrainingInefficiency, "training below its own baseline activity"},
		{WasteInferenceUnderutilized, "serving with spare capacity (low activity, KV cache, empty queue)"},
		{WasteUnavailable, "paid for while in a failure mode"},
		{WasteFragmentation, "MIG capacity no profile can use"},
	}}
	EnumFindingKind = Enum{"accelerator.finding.kind", []EnumValue{
		{FindingRightsizing, "a smaller MIG profile or cheaper instance type fits"},
		{FindingTrainingEfficiency, "training activity below its own baseline"},
		{FindingInferenceUnderCapacity, "fewer replicas or a smaller partition would serve the load"},
		{FindingUnhealthyCapacity, "a device in a failure mode is still paid for"},
	}}
	EnumFailureMode = Enum{"accelerator.health.failure_mode", []EnumValue{
		{FailureModeNone, "informational"},
		{FailureModeApplication, "the application faulted; the device is fine"},
		{FailureModeMemory, "device memory error (ECC, row remap, page retirement)"},
		{FailureModeHardware, "device hardware or firmware fault"},
		{FailureModeInterconnect, "NVLink, NVSwitch or PCIe fault"},
		{FailureModeDriver, "driver or GSP fault"},
		{FailureModeDeviceLost, "the device is no longer reachable"},
		{FailureModePower, "power delivery"},
		{FailureModeThermal, "thermal"},
		{FailureModeService, "a node service (MPS control daemon) is down"},
		{FailureModeUnknown, "a driver or PCIe message of a form not known yet; its raw lines are the evidence"},
	}}
	EnumAction = Enum{"accelerator.health.action", []EnumValue{
		{ActionNone, "nothing to do"},
		{ActionMonitor, "watch for recurrence"},
		{ActionRestartApp, "restart the application"},
		{ActionResetGPU, "reset the GPU (nvidia-smi -r) once it is drained"},
		{ActionDrainAndReset, "drain the node's workloads from the GPU, then reset it"},
		{ActionRebootNode, "reboot (power-cycle) the node"},
		{ActionReplaceDevice, "replace the device (RMA)"},
		{ActionCheckHardware, "check cabling, power and cooling"},
		{ActionRestartService, "restart the node service"},
		{ActionContactSupport, "collect a bug report and contact the vendor"},
		{ActionInvestigate, "a person reads the raw message: nothing is acted on automatically"},
	}}
	EnumEventName = Enum{"event.name", []EnumValue{
		{EventXID, "an XID was reported"},
		{EventECCUncorrected, "uncorrected ECC errors increased"},
		{EventRowRemap, "a row remap is pending or has failed"},
		{EventDeviceLost, "a device is lost or has fallen off the bus"},
		{EventMPSDaemonDown, "the MPS control daemon stopped answering"},
		{EventNeuronHWError, "Neuron hardware error (ECC counters, or the driver's NEURON_HW_ERR kernel log line)"},
		{EventPCIeAER, "a PCIe AER error on an accelerator's link, or on the port above it (kernel log)"},
		{EventNVSwitchError, "an NVSwitch SXid: an NVLink fabric error (kernel log)"},
		{EventKernelLogUnknown, "a driver or PCIe message of a form not known yet, with its raw lines (kernel log)"},
		{EventFinding, "a cost finding"},
		{EventGPUReset, "a node agent's report on a GPU reset the remediator asked for"},
	}}
	EnumRemediationOutcome = Enum{AttrRemediationOutcome, []EnumValue{
		{RemediationOutcomeSucceeded, "the reset command succeeded"},
		{RemediationOutcomeFailed, "the reset command failed, or the request was malformed"},
		{RemediationOutcomeWaiting, "the GPU is still held (or its holders unknown): the reset waits"},
	}}
)
