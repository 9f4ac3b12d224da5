package accelschema

// Resource attributes: one resource per device or partition.
const (
	// Identity of the device or partition.
	AttrHWID            = "hw.id"
	AttrHWType          = "hw.type"
	AttrHWVendor        = "hw.vendor"
	AttrHWModel         = "hw.model"
	AttrHWDriverVersion = "hw.driver_version"
	// AttrHWParent is the semantic-convention key for the parent component;
	// on a partition it holds the hw.id of the physical device.
	AttrHWParent = "hw.parent"

	AttrKind             = "accelerator.kind"
	AttrDeviceIndex      = "accelerator.device.index"
	AttrPCIBusID         = "accelerator.pci.bus_id"
	AttrPartitionType    = "accelerator.partition.type"
	AttrPartitionID      = "accelerator.partition.id"
	AttrPartitionProfile = "accelerator.partition.profile"
	AttrPartitionShare   = "accelerator.partition.share"
	AttrMIGGPUInstanceID = "accelerator.mig.gpu_instance.id"
	AttrMIGComputeInstID = "accelerator.mig.compute_instance.id"
	AttrNeuronCoreIndex  = "accelerator.neuroncore.index"
	AttrNeuronRuntimeTag = "aws.neuron.runtime.tag"
	AttrAllocationState  = "accelerator.allocation.state"

	// DRA allocation that holds the device.
	AttrDRADriver         = "accelerator.dra.driver"
	AttrDRAPool           = "accelerator.dra.pool"
	AttrDRADevice         = "accelerator.dra.device"
	AttrDRAClaimName      = "accelerator.dra.claim.name"
	AttrDRAClaimNamespace = "accelerator.dra.claim.namespace"
	AttrDRAShareID        = "accelerator.dra.share_id"

	// Where it runs.
	AttrHostName      = "host.name"
	AttrHostID        = "host.id"
	AttrHostType      = "host.type"
	AttrCloudProvider = "cloud.provider"
	AttrCloudRegion   = "cloud.region"
	AttrCloudZone     = "cloud.availability_zone"

	// Who uses it.
	AttrK8sClusterName     = "k8s.cluster.name"
	AttrK8sNodeName        = "k8s.node.name"
	AttrK8sNamespaceName   = "k8s.namespace.name"
	AttrK8sPodName         = "k8s.pod.name"
	AttrK8sPodUID          = "k8s.pod.uid"
	AttrK8sContainerName   = "k8s.container.name"
	AttrK8sDeploymentName  = "k8s.deployment.name"
	AttrK8sReplicaSetName  = "k8s.replicaset.name"
	AttrK8sStatefulSetName = "k8s.statefulset.name"
	AttrK8sDaemonSetName   = "k8s.daemonset.name"
	AttrK8sJobName         = "k8s.job.name"
	AttrK8sCronJobName     = "k8s.cronjob.name"
	AttrECSClusterARN      = "aws.ecs.cluster.arn"
	AttrECSTaskARN         = "aws.ecs.task.arn"
	AttrECSTaskFamily      = "aws.ecs.task.family"
	AttrContainerName      = "container.name"
	AttrTeam               = "accelerator.team"
	AttrWorkloadName       = "accelerator.workload.name"
	AttrWorkloadType       = "accelerator.workload.type"
	AttrJobID              = "accelerator.job.id"
	// K8sPodLabelPrefix + <label key> carries an allowlisted pod label
	// (registered as the pattern AttrK8sPodLabel).
	K8sPodLabelPrefix = "k8s.pod.label."
	AttrK8sPodLabel   = "k8s.pod.label.<key>"

	// LLM serving.
	AttrGenAIProviderName = "gen_ai.provider.name"
	AttrGenAIRequestModel = "gen_ai.request.model"
	AttrGenAIOperation    = "gen_ai.operation.name"
	AttrServerAddress     = "server.address"
	AttrServerPort        = "server.port"
)

// Data point attributes.
const (
	AttrErrorType         = "error.type"
	AttrHWState           = "hw.state"
	AttrHWDirection       = "hw.direction"
	AttrHWGPUTask         = "hw.gpu.task"
	AttrHWSensorLocation  = "hw.sensor_location"
	AttrLinkType          = "accelerator.link.type"
	AttrClockType         = "accelerator.clock.type"
	AttrThrottleReason    = "accelerator.throttle.reason"
	AttrProcessPID        = "process.pid"
	AttrConsumerPod       = "accelerator.consumer.pod"
	AttrXID               = "accelerator.xid"
	AttrRetirementCause   = "accelerator.memory.retirement.cause"
	AttrRemapType         = "accelerator.memory.remap.type"
	AttrMemoryCategory    = "accelerator.memory.category"
	AttrMemoryLocation    = "accelerator.memory.location"
	AttrCPUMode           = "accelerator.cpu.mode"
	AttrLatencyKind       = "accelerator.latency.kind"
	AttrLatencyPercentile = "accelerator.latency.percentile"
	AttrExecutionStatus   = "accelerator.execution.status"
	AttrTokenType         = "gen_ai.token.type"
	AttrFinishReason      = "gen_ai.response.finish_reason"
	AttrWasteReason       = "accelerator.waste.reason"
	AttrFindingKind       = "accelerator.finding.kind"
)

// Log record attributes for health events and findings.
const (
	AttrEventName          = "event.name"
	AttrHealthFailureMode  = "accelerator.health.failure_mode"
	AttrHealthAction       = "accelerator.health.action"
	AttrHealthDescription  = "accelerator.health.description"
	AttrHealthSources      = "accelerator.health.sources"
	AttrHealthDetail       = "accelerator.health.detail"
	AttrProcessName        = "process.executable.name"
	AttrFindingEvidence    = "accelerator.finding.evidence"
	AttrFindingAction      = "accelerator.finding.action"
	AttrFindingSavingMonth = "accelerator.finding.monthly_saving"
	AttrFindingTarget      = "accelerator.finding.target"
	// A node agent's report of a GPU reset the remediator asked for.
	AttrRemediationPlanID  = "accelerator.remediation.plan_id"
	AttrRemediationOutcome = "accelerator.remediation.outcome"
)

// Event names (the event.name attribute of log records).
const (
	EventXID            = "accelerator.health.xid"
	EventECCUncorrected = "accelerator.health.ecc_uncorrected"
	EventRowRemap       = "accelerator.health.row_remap"
	EventDeviceLost     = "accelerator.health.device_lost"
	EventMPSDaemonDown  = "accelerator.health.mps_daemon_down"
	EventNeuronHWError  = "accelerator.health.neuron_hw_error"
	EventPCIeAER        = "accelerator.health.pcie_aer"
	EventNVSwitchError  = "accelerator.health.nvswitch_error"
	// EventKernelLogUnknown is a kernel log message with a driver's marker
	// in a form not known yet (internal/kernellog: never dropped).
	EventKernelLogUnknown = "accelerator.health.kernel_log_unknown"
	EventFinding          = "accelerator.finding"
	// EventGPUReset is a node agent's report on a GPU reset the
	// remediator asked for (accelerator_gpu_reset receiver).
	EventGPUReset = "accelerator.remediation.gpu_reset"
)

// Where an attribute is set.
type Scope string

const (
	ScopeResource  Scope = "resource"
	ScopeDataPoint Scope = "datapoint"
	ScopeLog       Scope = "log"
)

// AttributeDef documents one attribute key.
type AttributeDef struct {
	Key     string
	Type    string // string, int, double, bool
	Scope   Scope
	Enum    *Enum // nil when free-form
	SemConv bool  // defined by OpenTelemetry semantic conventions
	Brief   string
}

// Attributes lists every attribute key this distribution sets.
var Attributes = []AttributeDef{
	{AttrHWID, "string", ScopeResource, nil, true, "Device or partition id: GPU UUID (`GPU-…`), MIG UUID (`MIG-…`, or `<parent UUID>/gi<N>` when only the parent is known), Neuron `neuron_device_<i>` / `neuron_device_<i>/neuroncore_<global core index>`."},
	{AttrHWType, "string", ScopeResource, &EnumHWType, true, "Always `gpu` for accelerators (semantic conventions have no separate accelerator type)."},
	{AttrHWVendor, "string", ScopeResource, nil, true, "`NVIDIA` or `AWS`."},
	{AttrHWModel, "string", ScopeResource, nil, true, "Model name as the source reports it, e.g. `NVIDIA H100 80GB HBM3`, `trainium2`."},
	{AttrHWDriverVersion, "string", ScopeResource, nil, true, "Driver (NVIDIA) or runtime (Neuron) version."},
	{AttrHWParent, "string", ScopeResource, nil, true, "On a partition: `hw.id` of the physical device it belongs to."},
	{AttrKind, "string", ScopeResource, &EnumKind, false, "Accelerator family."},
	{AttrDeviceIndex, "int", ScopeResource, nil, false, "Index of the physical device on its host (`nvidia-smi` index, Neuron device index)."},
	{AttrPCIBusID, "string", ScopeResource, nil, false, "PCI bus id of the physical device."},
	{AttrPartitionType, "string", ScopeResource, &EnumPartitionType, false, "How the device is divided for this resource."},
	{AttrPartitionID, "string", ScopeResource, nil, false, "Partition id within its parent: MIG GPU-instance id, replica id (`GPU-…::N`), NeuronCore index, DRA `driver/pool/device[/shareID]`."},
	{AttrPartitionProfile, "string", ScopeResource, nil, false, "Partition profile, e.g. MIG `1g.10gb`, `3g.40gb`."},
	{AttrPartitionShare, "double", ScopeResource, nil, false, "Fraction (0..1] of the physical device this resource stands for; the cost weight."},
	{AttrMIGGPUInstanceID, "int", ScopeResource, nil, false, "MIG GPU-instance id."},
	{AttrMIGComputeInstID, "int", ScopeResource, nil, false, "MIG compute-instance id."},
	{AttrNeuronCoreIndex, "int", ScopeResource, nil, false, "Global NeuronCore index on the host."},
	{AttrNeuronRuntimeTag, "string", ScopeResource, nil, false, "neuron-monitor `neuron_runtime_tag` (`NEURON_PROCESS_TAG`, else the runtime's pid)."},
	{AttrAllocationState, "string", ScopeResource, &EnumAllocationState, false, "Whether any workload holds the device; `unallocated` devices are still paid for."},
	{AttrDRADriver, "string", ScopeResource, nil, false, "DRA driver of the allocation, e.g. `gpu.nvidia.com`."},
	{AttrDRAPool, "string", ScopeResource, nil, false, "DRA pool of the allocated device."},
	{AttrDRADevice, "string", ScopeResource, nil, false, "DRA device name, e.g. `gpu-0`, `gpu-0-mig-1g10gb-19-0`."},
	{AttrDRAClaimName, "string", ScopeResource, nil, false, "ResourceClaim that holds the device."},
	{AttrDRAClaimNamespace, "string", ScopeResource, nil, false, "Namespace of the ResourceClaim that holds the device."},
	{AttrDRAShareID, "string", ScopeResource, nil, false, "DRA share id when the device allows multiple allocations."},
	{AttrHostName, "string", ScopeResource, nil, true, "Host name."},
	{AttrHostID, "string", ScopeResource, nil, true, "Cloud instance id or machine id."},
	{AttrHostType, "string", ScopeResource, nil, true, "Instance type, e.g. `p5.48xlarge`; the key of the pricing join."},
	{AttrCloudProvider, "string", ScopeResource, nil, true, "`aws`, …"},
	{AttrCloudRegion, "string", ScopeResource, nil, true, "Cloud region; second key of the pricing join."},
	{AttrCloudZone, "string", ScopeResource, nil, true, "Availability zone."},
	{AttrK8sClusterName, "string", ScopeResource, nil, true, "Cluster name (from config)."},
	{AttrK8sNodeName, "string", ScopeResource, nil, true, "Node name."},
	{AttrK8sNamespaceName, "string", ScopeResource, nil, true, "Namespace of the pod holding the device."},
	{AttrK8sPodName, "string", ScopeResource, nil, true, "Pod holding the device."},
	{AttrK8sPodUID, "string", ScopeResource, nil, true, "UID of that pod."},
	{AttrK8sContainerName, "string", ScopeResource, nil, true, "Container the device is assigned to."},
	{AttrK8sDeploymentName, "string", ScopeResource, nil, true, "Owning Deployment."},
	{AttrK8sReplicaSetName, "string", ScopeResource, nil, true, "Owning ReplicaSet."},
	{AttrK8sStatefulSetName, "string", ScopeResource, nil, true, "Owning StatefulSet."},
	{AttrK8sDaemonSetName, "string", ScopeResource, nil, true, "Owning DaemonSet."},
	{AttrK8sJobName, "string", ScopeResource, nil, true, "Owning Job."},
	{AttrK8sCronJobName, "string", ScopeResource, nil, true, "Owning CronJob."},
	{AttrECSClusterARN, "string", ScopeResource, nil, true, "ECS cluster of the task holding the device."},
	{AttrECSTaskARN, "string", ScopeResource, nil, true, "ECS task holding the device."},
	{AttrECSTaskFamily, "string", ScopeResource, nil, true, "Task definition family."},
	{AttrContainerName, "string", ScopeResource, nil, true, "Container name outside Kubernetes (ECS)."},
	{AttrTeam, "string", ScopeResource, nil, false, "Team that owns the workload (from a configurable label or annotation)."},
	{AttrWorkloadName, "string", ScopeResource, nil, false, "Workload: label/annotation, else the top of the owner chain (Deployment, StatefulSet, Job, CronJob, LeaderWorkerSet, RayCluster, …), else the pod."},
	{AttrWorkloadType, "string", ScopeResource, &EnumWorkloadType, false, "What the workload does; drives which cost findings apply."},
	{AttrK8sPodLabel, "string", ScopeResource, nil, true, "A pod label, copied by the attributes processor when its key is in `pod_labels` (an allowlist, to keep cardinality bounded)."},
	{AttrJobID, "string", ScopeResource, nil, false, "Batch job id from the static mapping file (Slurm, bare metal)."},
	{AttrGenAIProviderName, "string", ScopeResource, &EnumInferenceServer, true, "Inference server kind."},
	{AttrGenAIRequestModel, "string", ScopeResource, nil, true, "Served model name."},
	{AttrGenAIOperation, "string", ScopeResource, nil, true, "GenAI operation (configurable per target, default `chat`)."},
	{AttrServerAddress, "string", ScopeResource, nil, true, "Address of the scraped inference server."},
	{AttrServerPort, "int", ScopeResource, nil, true, "Port of the scraped inference server."},

	{AttrErrorType, "string", ScopeDataPoint, &EnumErrorType, true, "Error class of `hw.errors` and `accelerator.execution.errors`."},
	{AttrHWState, "string", ScopeDataPoint, &EnumHWState, true, "State of `hw.status`."},
	{AttrHWDirection, "string", ScopeDataPoint, &EnumDirection, true, "Transfer direction."},
	{AttrHWGPUTask, "string", ScopeDataPoint, &EnumGPUTask, true, "Engine of `hw.gpu.utilization`."},
	{AttrHWSensorLocation, "string", ScopeDataPoint, nil, true, "Sensor of `hw.temperature`: `gpu` or `memory`."},
	{AttrLinkType, "string", ScopeDataPoint, &EnumLinkType, false, "Interconnect of `hw.gpu.io`."},
	{AttrClockType, "string", ScopeDataPoint, &EnumClockType, false, "Clock domain."},
	{AttrThrottleReason, "string", ScopeDataPoint, &EnumThrottleReason, false, "Why clocks are held down."},
	{AttrConsumerPod, "string", ScopeDataPoint, nil, false, "`<namespace>/<pod>` on a per-pod measurement of a shared device (dcgm-exporter's per-pod split); `accelerator_attributes` moves the point to that pod's copy and removes the attribute."},
	{AttrProcessPID, "int", ScopeDataPoint, nil, true, "Process on a shared GPU (compute or MPS client); on Neuron metrics, the pid of the Neuron runtime that reported the data point."},
	{AttrXID, "int", ScopeDataPoint, nil, false, "NVIDIA XID code, on `hw.errors{error.type=xid}` and health events."},
	{AttrRetirementCause, "string", ScopeDataPoint, &EnumRetirementCause, false, "Why a memory page was retired."},
	{AttrRemapType, "string", ScopeDataPoint, &EnumRemapType, false, "Row remaps by the error class that caused them."},
	{AttrMemoryCategory, "string", ScopeDataPoint, nil, false, "Neuron device memory category: `constants`, `model_code`, `model_shared_scratchpad`, `runtime_memory`, `tensors`."},
	{AttrMemoryLocation, "string", ScopeDataPoint, &EnumMemoryLocation, false, "Host or device memory."},
	{AttrCPUMode, "string", ScopeDataPoint, &EnumCPUMode, false, "CPU time class."},
	{AttrLatencyKind, "string", ScopeDataPoint, &EnumLatencyKind, false, "Neuron execution latency measured end to end or on the device."},
	{AttrLatencyPercentile, "string", ScopeDataPoint, nil, false, "Percentile as neuron-monitor names it: `p0`, `p1`, `p25`, `p50`, `p75`, `p99`, `p100`."},
	{AttrExecutionStatus, "string", ScopeDataPoint, &EnumExecutionStatus, false, "Outcome of a Neuron execution."},
	{AttrTokenType, "string", ScopeDataPoint, &EnumTokenType, true, "Token class of `gen_ai.server.tokens`."},
	{AttrFinishReason, "string", ScopeDataPoint, nil, false, "Why a request finished (`stop`, `length`, `abort`, `error`, …) as the server reports it."},
	{AttrWasteReason, "string", ScopeDataPoint, &EnumWasteReason, false, "Why money was wasted."},
	{AttrFindingKind, "string", ScopeDataPoint, &EnumFindingKind, false, "Kind of cost finding."},

	{AttrEventName, "string", ScopeLog, &EnumEventName, true, "Kind of log event."},
	{AttrHealthFailureMode, "string", ScopeLog, &EnumFailureMode, false, "Failure mode of a health event (from internal/xid)."},
	{AttrHealthAction, "string", ScopeLog, &EnumAction, false, "Recommended action for a health event or unhealthy-capacity finding."},
	{AttrHealthDescription, "string", ScopeLog, nil, false, "What the source said, in words."},
	{AttrHealthSources, "string", ScopeLog, nil, false, "The sources that saw a health event, comma-separated and sorted (`dcgm_exporter`, `kernel_log`, `nvml`, `neuron_monitor`): one event however many saw it."},
	{AttrHealthDetail, "string", ScopeLog, nil, false, "What the driver wrote in the kernel log for the event: its lines, newline-separated."},
	{AttrProcessName, "string", ScopeLog, nil, false, "On a health event: the name of the process the driver named in the kernel log."},
	{AttrFindingEvidence, "string", ScopeLog, nil, false, "Numbers the finding rests on, as `key=value` pairs."},
	{AttrFindingAction, "string", ScopeLog, nil, false, "Recommended action, in words."},
	{AttrFindingSavingMonth, "double", ScopeLog, nil, false, "Estimated saving in USD per month (monthly_hours of the cost processor, default 730 h) if the action is taken."},
	{AttrFindingTarget, "string", ScopeLog, nil, false, "What to move to: a MIG profile, an instance type, a replica count."},
	{AttrRemediationPlanID, "string", ScopeLog, nil, false, "On a GPU reset report: the remediation plan that asked for the reset."},
	{AttrRemediationOutcome, "string", ScopeLog, &EnumRemediationOutcome, false, "On a GPU reset report: what the node agent did."},
}
