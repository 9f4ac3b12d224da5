package accelschema

// Counting is the one rule that keeps every physical quantity counted once:
// it says on which resource of the device tree (physical device → partition
// → consumer copy) a metric lives. Every receiver and processor places its
// series by it, docs/metrics.md shows it per metric, and
// internal/accelschema/countcheck checks output against it.
type Counting string

const (
	// CountedPerDevice metrics measure the physical device (power, energy,
	// temperatures, clocks and throttling, PCIe/NVLink, error and remap
	// counters, hw.status, the device's memory size). They live only on
	// the device's own resource — the one without hw.parent — and exist
	// once per device, however it is partitioned or shared: never on a MIG
	// instance, a NeuronCore, or a time-sliced, MPS or DRA consumer copy.
	CountedPerDevice Counting = "device"
	// CountedPerPartition metrics measure what one partition or consumer
	// uses (partition memory use and size, engine activity, per-process
	// and per-pod series). They live on the resource that was
	// measured: the device itself while it is whole, else each MIG
	// instance or NeuronCore, or a consumer copy when the source measured
	// that consumer. A parent never repeats what its partitions report, so
	// a sum over all resources counts each quantity once.
	CountedPerPartition Counting = "partition"
	// CountedPerShare metrics (price, cost, waste, findings) are carried by
	// every resource for its accelerator.partition.share of the device: a
	// parent for what its partitions leave, each partition or copy for its
	// own share. The shares of one device add up to at most 1, so a sum
	// over all resources pays for each device once.
	CountedPerShare Counting = "share"
	// CountedPerHolding metrics (the allocation series) are carried once per
	// holding of a device, by the resource that stands for it: a device or
	// partition held whole (in place), each consumer copy of a shared device,
	// and what nobody or only a placeholder holds (an unallocated or
	// reserved device or partition, a shared device's own resource when its
	// consumers leave something). A device whose partitions are reported (a
	// MIG-enabled GPU, a Neuron device beside its NeuronCores) carries none:
	// its partitions do. The value is the resource's
	// accelerator.partition.share, so the values of one physical device add
	// up to at most 1 and a sum grouped by holder says who holds what. It
	// names who holds a share, never moves a reading: the device's readings
	// stay on the device.
	CountedPerHolding Counting = "holding"
	// CountedPerServer metrics describe an inference server (a pod or an
	// endpoint), on a resource without hw.id.
	CountedPerServer Counting = "server"
	// CountedPerNode metrics describe a node-wide daemon (the MPS control
	// daemon), on a resource without hw.id.
	CountedPerNode Counting = "node"
	// CountedPerWorkload metrics describe what the Kubernetes API says about
	// a workload or the cluster (cold starts, pods that cannot be
	// scheduled), on a resource without hw.id.
	CountedPerWorkload Counting = "workload"
)

// Countings lists the values in the order docs/metrics.md explains them.
var Countings = []struct {
	Counting Counting
	Brief    string
}{
	{CountedPerDevice, "once per physical device, on the device's own resource (no `hw.parent`); never on a MIG instance, NeuronCore or consumer copy"},
	{CountedPerPartition, "on the resource that was measured: the whole device, or each MIG instance / NeuronCore, or a consumer copy where the source measured that consumer; a parent never repeats what its partitions report"},
	{CountedPerShare, "on every resource, for its `accelerator.partition.share` of the device (a parent for what its partitions leave); the shares of one device add up to at most 1"},
	{CountedPerHolding, "once per holding, on the resource that stands for it: a device or partition held whole, each consumer copy of a shared device, and what nobody or only a placeholder holds (`accelerator.allocation.state`); not on a device whose partitions are reported (they carry it); the value is the resource's `accelerator.partition.share`, so the values of one device add up to at most 1"},
	{CountedPerServer, "on an inference server's resource (a pod or endpoint; no `hw.id`)"},
	{CountedPerNode, "on a node-wide daemon's resource (no `hw.id`)"},
	{CountedPerWorkload, "on a workload's or the cluster's resource, from the Kubernetes API (no `hw.id`)"},
}

// PerPodSources says which metrics can be measured per pod on a shared
// device, and from which source; nothing is ever split by share.
var PerPodSources = []struct {
	Metrics []string
	Source  string
}{
	{[]string{MetricProcessMemoryUsage, MetricProcessUtilization}, "NVML per-process data (`process.pid`), moved by `accelerator_attributes` to the copy of the pod that owns the pid (`/proc/<pid>/cgroup`)"},
	{[]string{MetricGPUUtilization, MetricGPUMemoryUsage}, "dcgm-exporter 4.5+ with `KUBERNETES_VIRTUAL_GPUS` and `per_pod_usage: true` on the `dcgm_exporter` source: per-pod `DCGM_FI_DEV_GPU_UTIL` / `DCGM_FI_DEV_FB_USED` rows of a shared GPU become points with `" + AttrConsumerPod + "`, moved to that pod's copy"},
	{[]string{MetricFlops, MetricExecutionLatency, MetricExecutions, MetricExecutionErrors, MetricRuntimeCPU, MetricRuntimeMemory}, "neuron-monitor's per-runtime data (`process.pid`), on the NeuronCores the runtime holds"},
}

// IsDeviceResource reports whether a resource with these identity values
// is a physical device's own resource (where CountedPerDevice metrics
// live): it has a hw.id and no hw.parent.
func IsDeviceResource(hwID, parent string) bool { return hwID != "" && parent == "" }
