// Package scenario reads the simulator's fleet description: a YAML file
// decoded strictly (unknown fields, wrong types and impossible layouts are
// rejected) with every error naming the file, the line and the field path,
// e.g. `fleet.yaml:42: nodes[1].gpus.model: unknown model "H300" (want one
// of A100-40GB, H100-80GB, H200-141GB, L4)`.
package scenario

import "time"

// Workload profiles: each makes one cost finding or health path reachable.
const (
	ProfileTrainingSteady     = "training-steady"
	ProfileTrainingDegrading  = "training-degrading"
	ProfileInferenceSteady    = "inference-steady"
	ProfileInferenceBursty    = "inference-bursty"
	ProfileInferenceOverprov  = "inference-overprovisioned"
	ProfileIdle               = "idle"
	defaultDegradeAfter       = 20 * time.Minute
	defaultDegradeTo          = 0.5
	defaultBurstPeriod        = 10 * time.Minute
	defaultBurstDuration      = 3 * time.Minute
	defaultDriverVersion      = "550.90.07"
	defaultCluster            = "accelsim"
	defaultRegion             = "us-east-1"
	defaultSeed               = 1
	defaultNeuronSchema       = NeuronSchemaGuide
	defaultHostnameLabel      = "Hostname"
	defaultMIGStrategy        = MIGMixed
	defaultAutoPodsNamespace  = "default"
	defaultInferenceModelName = "meta-llama/Llama-3.1-8B-Instruct"
)

// Profiles lists the workload profiles.
var Profiles = []string{ProfileTrainingSteady, ProfileTrainingDegrading, ProfileInferenceSteady, ProfileInferenceBursty, ProfileInferenceOverprov, ProfileIdle}

// IsInference reports whether a profile serves requests.
func IsInference(profile string) bool {
	return profile == ProfileInferenceSteady || profile == ProfileInferenceBursty || profile == ProfileInferenceOverprov
}

// IsTraining reports whether a profile trains.
func IsTraining(profile string) bool {
	return profile == ProfileTrainingSteady || profile == ProfileTrainingDegrading
}

// GPU sharing strategies (device plugin, node-wide, and DRA claim config).
const (
	SharingNone        = "none"
	SharingTimeSlicing = "time-slicing"
	SharingMPS         = "mps"
)

// MIG strategies of the device plugin.
const (
	MIGSingle = "single"
	MIGMixed  = "mixed"
)

// neuron-monitor output schemas (release drift).
const (
	// NeuronSchemaGuide follows the current user guide: "flops",
	// neuron_runtime_used_bytes.neuron_device, full neuron_hardware_info,
	// "v3d" on Trn2, neuron_runtime_data [] when nothing runs.
	NeuronSchemaGuide = "guide"
	// NeuronSchemaInf2Capture follows a real inf2 capture (runtime 2.30):
	// "effective_flops" and neuron_runtime_used_bytes.device.
	NeuronSchemaInf2Capture = "inf2-capture"
	// NeuronSchemaLegacy follows older releases: neuron_hardware_info has
	// only the device and core counts, neuron_runtime_data is null when
	// nothing runs.
	NeuronSchemaLegacy = "legacy"
)

// NeuronSchemas lists the schema names.
var NeuronSchemas = []string{NeuronSchemaGuide, NeuronSchemaInf2Capture, NeuronSchemaLegacy}

// Inference server kinds.
const (
	ServerVLLM   = "vllm"
	ServerSGLang = "sglang"
)

// Scenario is a decoded, validated fleet description. Defaults are filled in.
type Scenario struct {
	Cluster string   `yaml:"cluster"`
	Region  string   `yaml:"region"`
	Seed    int64    `yaml:"seed"`
	Nodes   []*Node  `yaml:"nodes"`
	Pods    []*Pod   `yaml:"pods"`
	Claims  []*Claim `yaml:"resource_claims"`

	// File is the name errors are reported against.
	File string `yaml:"-"`
	pos  positions
}

// Node is one host, or a group of identical hosts with Repeat.
type Node struct {
	Name         string            `yaml:"name"`
	InstanceType string            `yaml:"instance_type"`
	Zone         string            `yaml:"zone"`
	Repeat       int               `yaml:"repeat"`
	Labels       map[string]string `yaml:"labels"`
	// NVIDIA nodes.
	DriverVersion string        `yaml:"driver_version"`
	GPUs          *GPUs         `yaml:"gpus"`
	DRA           bool          `yaml:"dra"`
	DCGMExporter  *DCGMExporter `yaml:"dcgm_exporter"`
	// Neuron nodes.
	Neuron *Neuron `yaml:"neuron"`

	Failures []*Failure `yaml:"failures"`
	AutoPods *AutoPods  `yaml:"auto_pods"`
}

// GPUs describes a node's NVIDIA GPUs and how the device plugin offers them.
type GPUs struct {
	Model           string `yaml:"model"`
	Count           int    `yaml:"count"`
	Sharing         string `yaml:"sharing"`
	Replicas        int    `yaml:"replicas"`
	RenameByDefault bool   `yaml:"rename_by_default"`
	MIG             *MIG   `yaml:"mig"`
}

// MIG is the node's MIG configuration.
type MIG struct {
	Strategy string        `yaml:"strategy"`
	Devices  []*MIGDevices `yaml:"devices"`
}

// MIGDevices applies one layout to some GPUs.
type MIGDevices struct {
	GPUs   []int    `yaml:"gpus"`
	Layout []string `yaml:"layout"`
}

// DCGMExporter configures the node's simulated dcgm-exporter.
type DCGMExporter struct {
	// Kubernetes adds pod/namespace/container labels (GPU Operator default).
	Kubernetes *bool `yaml:"kubernetes"`
	// KubernetesDRA maps DRA allocations too (--kubernetes-enable-dra).
	KubernetesDRA bool `yaml:"kubernetes_dra"`
	// HostnameLabel is "Hostname" (4.x), "hostname" (newest) or "none".
	HostnameLabel string `yaml:"hostname_label"`
	// OldNamespace uses uuid/pod_name/pod_namespace/container_name.
	OldNamespace bool `yaml:"old_namespace"`
	// ClockEvents adds DCGM_FI_DEV_CLOCK_THROTTLE_REASONS (commented out
	// in dcgm-exporter's default counters; enabled where throttling is
	// watched).
	ClockEvents bool `yaml:"clock_events"`
	// VirtualGPUs is dcgm-exporter 4.5+ with KUBERNETES_VIRTUAL_GPUS: a
	// GPU shared by time-slicing gets one row per pod, whose
	// DCGM_FI_DEV_GPU_UTIL and DCGM_FI_DEV_FB_USED are that pod's own
	// (from NVML's per-process data); the agent's dcgm receiver reads them
	// with per_pod_usage.
	VirtualGPUs bool `yaml:"virtual_gpus"`
}

// KubernetesEnabled reports whether pod labels are added.
func (d *DCGMExporter) KubernetesEnabled() bool { return d.Kubernetes == nil || *d.Kubernetes }

// Neuron configures a Neuron node's neuron-monitor.
type Neuron struct {
	Devices int    `yaml:"devices"`
	Schema  string `yaml:"schema"`
	// RuntimeVCPUError reproduces neuron-monitor running in a container
	// without the host PID namespace: neuron_runtime_vcpu_usage carries an
	// "open /proc/<pid>/stat" error.
	RuntimeVCPUError bool `yaml:"runtime_vcpu_error"`
}

// Failure is a device fault at a simulated time.
type Failure struct {
	GPU      *int          `yaml:"gpu"`
	Device   *int          `yaml:"device"`
	At       time.Duration `yaml:"at"`
	XID      int           `yaml:"xid"`
	RowRemap string        `yaml:"row_remap"`
	ECC      string        `yaml:"ecc"`
	Count    int           `yaml:"count"`
	// Throttle holds the GPU's clocks down from At on, for heat (thermal)
	// or its power brake (power): the clock-event reason bits are set and
	// the work on it runs at half speed.
	Throttle string `yaml:"throttle"`
}

// Row-remap failure kinds and Neuron ECC event kinds.
const (
	RowRemapPending = "pending"
	RowRemapFailed  = "failed"

	ECCMemCorrected    = "mem_corrected"
	ECCMemUncorrected  = "mem_uncorrected"
	ECCSRAMCorrected   = "sram_corrected"
	ECCSRAMUncorrected = "sram_uncorrected"

	ThrottleThermal = "thermal"
	ThrottlePower   = "power"
)

// AutoPods fills every whole GPU (or Neuron device) nobody requested with
// generated pods, for load tests of large fleets.
type AutoPods struct {
	Namespace     string    `yaml:"namespace"`
	Team          string    `yaml:"team"`
	DevicesPerPod int       `yaml:"devices_per_pod"`
	Workload      *Workload `yaml:"workload"`
}

// Pod is a Kubernetes pod that may hold devices.
type Pod struct {
	Name        string            `yaml:"name"`
	Namespace   string            `yaml:"namespace"`
	Node        string            `yaml:"node"`
	Team        string            `yaml:"team"`
	Owner       *Owner            `yaml:"owner"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
	Workload    *Workload         `yaml:"workload"`
	Containers  []*Container      `yaml:"containers"`
	Inference   *Inference        `yaml:"inference"`
	// NeuronProcessTag is NEURON_PROCESS_TAG; empty means the pid is the tag.
	NeuronProcessTag string `yaml:"neuron_process_tag"`
}

// Owner is the controller of a pod.
type Owner struct {
	Kind string `yaml:"kind"`
	Name string `yaml:"name"`
}

// Owner kinds.
const (
	OwnerDeployment      = "Deployment"
	OwnerStatefulSet     = "StatefulSet"
	OwnerJob             = "Job"
	OwnerCronJob         = "CronJob"
	OwnerLeaderWorkerSet = "LeaderWorkerSet"
)

// OwnerKinds lists the supported owner kinds.
var OwnerKinds = []string{OwnerDeployment, OwnerStatefulSet, OwnerJob, OwnerCronJob, OwnerLeaderWorkerSet}

// Workload selects a profile and its knobs.
type Workload struct {
	Profile string `yaml:"profile"`
	// Intensity is the steady activity of training profiles (0..1].
	Intensity float64 `yaml:"intensity"`
	// MemoryFraction is the fraction of held device memory in use.
	MemoryFraction float64 `yaml:"memory_fraction"`
	// training-degrading
	DegradeAfter time.Duration `yaml:"degrade_after"`
	DegradeTo    float64       `yaml:"degrade_to"`
	// inference-bursty
	BurstPeriod   time.Duration `yaml:"burst_period"`
	BurstDuration time.Duration `yaml:"burst_duration"`
	// LongPromptsAfter (inference profiles): from then on the prompts are
	// four times as long (long-context traffic), so that the KV cache
	// fills, requests are preempted and the time to first token rises.
	LongPromptsAfter time.Duration `yaml:"long_prompts_after"`
	// StartAfter (training profiles): the job is idle on its devices
	// until then (it waits for data), then runs at its intensity.
	StartAfter time.Duration `yaml:"start_after"`
}

// Container is one container and the devices it requests.
type Container struct {
	Name string `yaml:"name"`
	// GPUs are whole GPUs by index (device plugin nvidia.com/gpu).
	GPUs []int `yaml:"gpus"`
	// MIG are MIG devices "<gpu>:<slot>", slot indexing the GPU's layout.
	MIG []string `yaml:"mig"`
	// Replicas are time-slicing or MPS replicas "<gpu>::<replica>".
	Replicas      []string `yaml:"replicas"`
	NeuronCores   []int    `yaml:"neuron_cores"`
	NeuronDevices []int    `yaml:"neuron_devices"`
	// Claims are ResourceClaim names in the pod's namespace.
	Claims []string `yaml:"claims"`
}

// Inference runs an inference server in the pod.
type Inference struct {
	Server string `yaml:"server"`
	Model  string `yaml:"model"`
	// Container defaults to the first container.
	Container string `yaml:"container"`
}

// Claim is a DRA ResourceClaim allocated on a node.
type Claim struct {
	Name      string   `yaml:"name"`
	Namespace string   `yaml:"namespace"`
	Node      string   `yaml:"node"`
	GPUs      []int    `yaml:"gpus"`
	MIG       []string `yaml:"mig"`
	// Sharing is the opaque GpuConfig sharing strategy when several pods use
	// the claim: "" (none), time-slicing or mps.
	Sharing string `yaml:"sharing"`
}
