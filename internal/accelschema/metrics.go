package accelschema

// Instrument is how a metric is represented in pdata.
type Instrument string

const (
	// Gauge: pmetric Gauge.
	Gauge Instrument = "gauge"
	// Counter: monotonic Sum (cumulative unless stated otherwise).
	Counter Instrument = "counter"
	// UpDownCounter: non-monotonic cumulative Sum.
	UpDownCounter Instrument = "updowncounter"
	// Histogram: explicit-bucket Histogram, buckets as the source reports them.
	Histogram Instrument = "histogram"
)

// Metric names: devices.
const (
	MetricGPUUtilization       = "hw.gpu.utilization"
	MetricGPUMemoryUsage       = "hw.gpu.memory.usage"
	MetricGPUMemoryLimit       = "hw.gpu.memory.limit"
	MetricPartitionMemoryLimit = "accelerator.partition.memory.limit"
	MetricGPUMemoryUtilization = "hw.gpu.memory.utilization"
	MetricPower                = "hw.power"
	MetricEnergy               = "hw.energy"
	MetricTemperature          = "hw.temperature"
	MetricErrors               = "hw.errors"
	MetricStatus               = "hw.status"
	MetricGPUIO                = "hw.gpu.io"
	MetricLinkThroughput       = "accelerator.link.throughput"
	MetricClockFrequency       = "accelerator.clock.frequency"
	MetricThrottleTime         = "accelerator.clock.throttle.time"
	MetricThrottleActive       = "accelerator.clock.throttle.active"
	MetricGREngineActive       = "accelerator.gr_engine.active"
	MetricSMActive             = "accelerator.sm.active"
	MetricSMOccupancy          = "accelerator.sm.occupancy"
	MetricTensorActive         = "accelerator.tensor.active"
	MetricDRAMActive           = "accelerator.dram.active"
	MetricFlops                = "accelerator.flops"
	MetricRetiredPages         = "accelerator.memory.retired_pages"
	MetricRemappedRows         = "accelerator.memory.remapped_rows"
	MetricRowRemapPending      = "accelerator.memory.row_remap.pending"
	MetricRowRemapFailed       = "accelerator.memory.row_remap.failed"
	MetricProcessMemoryUsage   = "accelerator.process.memory.usage"
	MetricProcessUtilization   = "accelerator.process.utilization"
	MetricMPSDaemonUp          = "accelerator.mps.daemon.up"
	MetricMPSServers           = "accelerator.mps.servers"
	MetricMPSActiveThreads     = "accelerator.mps.active_thread_percentage"
	MetricExecutionLatency     = "accelerator.execution.latency"
	MetricExecutions           = "accelerator.execution.count"
	MetricExecutionErrors      = "accelerator.execution.errors"
	MetricRuntimeCPU           = "accelerator.runtime.cpu.utilization"
	MetricRuntimeMemory        = "accelerator.runtime.memory.usage"
)

// Metric names: LLM serving.
const (
	MetricTimeToFirstToken    = "gen_ai.server.time_to_first_token"
	MetricTimePerOutputToken  = "gen_ai.server.time_per_output_token"
	MetricInterTokenLatency   = "gen_ai.server.inter_token_latency"
	MetricRequestDuration     = "gen_ai.server.request.duration"
	MetricQueueDuration       = "gen_ai.server.queue.duration"
	MetricRequestsRunning     = "gen_ai.server.requests.running"
	MetricRequestsWaiting     = "gen_ai.server.requests.waiting"
	MetricRequests            = "gen_ai.server.requests"
	MetricKVCacheUtilization  = "gen_ai.server.kv_cache.utilization"
	MetricPrefixCacheHitRatio = "gen_ai.server.prefix_cache.hit_ratio"
	MetricPrefixCacheQueries  = "gen_ai.server.prefix_cache.queries"
	MetricPrefixCacheHits     = "gen_ai.server.prefix_cache.hits"
	MetricTokens              = "gen_ai.server.tokens"
	MetricPreemptions         = "gen_ai.server.preemptions"
)

// Metric names: cost.
const (
	MetricPrice    = "accelerator.price"
	MetricCost     = "accelerator.cost"
	MetricWaste    = "accelerator.waste"
	MetricFindings = "accelerator.findings"
)

// Metric names: allocation.
const (
	MetricAllocationShare = "accelerator.allocation.share"
)

// Emitter names the component family that produces a metric.
const (
	EmitterDCGM       = "dcgm"
	EmitterNeuron     = "neuron"
	EmitterInference  = "inference"
	EmitterCost       = "accelerator_cost"
	EmitterAttributes = "accelerator_attributes"
)

// MetricDef documents one metric.
type MetricDef struct {
	Name string
	// Counted says on which resource the metric lives, so that every
	// physical quantity is counted once (see Counting).
	Counted    Counting
	Instrument Instrument
	Unit       string
	ValueType  string // int or double
	Attributes []string
	Emitters   []string
	SemConv    bool
	Brief      string
}

// Metrics lists every metric this distribution emits.
var Metrics = []MetricDef{
	{MetricGPUUtilization, CountedPerPartition, Gauge, UnitRatio, "double", []string{AttrHWGPUTask, AttrProcessPID, AttrConsumerPod}, []string{EmitterDCGM, EmitterNeuron}, true, "Fraction of time the device (or NeuronCore) was busy over the sample period."},
	{MetricGPUMemoryUsage, CountedPerPartition, UpDownCounter, UnitBytes, "int", []string{AttrMemoryCategory, AttrProcessPID, AttrConsumerPod}, []string{EmitterDCGM, EmitterNeuron}, true, "Device memory in use (Neuron: by category)."},
	{MetricGPUMemoryLimit, CountedPerDevice, UpDownCounter, UnitBytes, "int", nil, []string{EmitterDCGM, EmitterNeuron}, true, "Memory size of the physical device (MIG instances carry theirs as `accelerator.partition.memory.limit`)."},
	{MetricPartitionMemoryLimit, CountedPerPartition, UpDownCounter, UnitBytes, "int", nil, []string{EmitterDCGM}, false, "Memory size of a partition (a MIG instance); the device's own size is `hw.gpu.memory.limit` on the device."},
	{MetricGPUMemoryUtilization, CountedPerPartition, Gauge, UnitRatio, "double", nil, []string{EmitterDCGM}, true, "Memory used / memory size."},
	{MetricPower, CountedPerDevice, Gauge, UnitWatts, "double", nil, []string{EmitterDCGM}, true, "Instantaneous power draw."},
	{MetricEnergy, CountedPerDevice, Counter, UnitJoules, "double", nil, []string{EmitterDCGM}, true, "Energy consumed since the driver loaded."},
	{MetricTemperature, CountedPerDevice, Gauge, UnitCelsius, "double", []string{AttrHWSensorLocation}, []string{EmitterDCGM}, true, "GPU die or memory temperature."},
	{MetricErrors, CountedPerDevice, Counter, UnitErrors, "int", []string{AttrErrorType, AttrXID}, []string{EmitterDCGM, EmitterNeuron}, true, "Hardware errors by class; XIDs carry their code."},
	{MetricStatus, CountedPerDevice, UpDownCounter, UnitRatio, "int", []string{AttrHWState}, []string{EmitterDCGM, EmitterNeuron}, true, "1 for the device's current state, 0 for the others."},
	{MetricGPUIO, CountedPerDevice, Counter, UnitBytes, "int", []string{AttrHWDirection, AttrLinkType}, []string{EmitterDCGM}, true, "Bytes moved over PCIe or NVLink."},
	{MetricLinkThroughput, CountedPerDevice, Gauge, UnitBytesPerSec, "double", []string{AttrHWDirection, AttrLinkType}, []string{EmitterDCGM}, false, "Current PCIe or NVLink throughput, where the source reports a rate rather than a counter."},
	{MetricClockFrequency, CountedPerDevice, Gauge, UnitHertz, "double", []string{AttrClockType}, []string{EmitterDCGM}, false, "Current clock frequency."},
	{MetricThrottleTime, CountedPerDevice, Counter, UnitSeconds, "double", []string{AttrThrottleReason}, []string{EmitterDCGM}, false, "Time clocks were held down, by reason."},
	{MetricThrottleActive, CountedPerDevice, Gauge, UnitRatio, "int", []string{AttrThrottleReason}, []string{EmitterDCGM}, false, "1 while a throttle reason is active."},
	{MetricGREngineActive, CountedPerPartition, Gauge, UnitRatio, "double", nil, []string{EmitterDCGM}, false, "Fraction of time the graphics/compute engine was active (DCGM PROF_GR_ENGINE_ACTIVE, GPM GRAPHICS_UTIL). Works on MIG."},
	{MetricSMActive, CountedPerPartition, Gauge, UnitRatio, "double", nil, []string{EmitterDCGM}, false, "Fraction of cycles an SM had at least one warp assigned."},
	{MetricSMOccupancy, CountedPerPartition, Gauge, UnitRatio, "double", nil, []string{EmitterDCGM}, false, "Resident warps / maximum warps per SM."},
	{MetricTensorActive, CountedPerPartition, Gauge, UnitRatio, "double", nil, []string{EmitterDCGM}, false, "Fraction of cycles the tensor pipes were active."},
	{MetricDRAMActive, CountedPerPartition, Gauge, UnitRatio, "double", nil, []string{EmitterDCGM}, false, "Fraction of cycles the memory interface was active."},
	{MetricFlops, CountedPerPartition, Gauge, UnitFlopsPerSec, "double", []string{AttrProcessPID}, []string{EmitterNeuron}, false, "Floating-point operations per second on a NeuronCore (`flops` or `effective_flops`)."},
	{MetricRetiredPages, CountedPerDevice, UpDownCounter, UnitPages, "int", []string{AttrRetirementCause}, []string{EmitterDCGM}, false, "Retired device-memory pages (pre-Ampere page retirement)."},
	{MetricRemappedRows, CountedPerDevice, UpDownCounter, UnitRows, "int", []string{AttrRemapType}, []string{EmitterDCGM}, false, "Remapped memory rows (Ampere and newer)."},
	{MetricRowRemapPending, CountedPerDevice, Gauge, UnitRatio, "int", nil, []string{EmitterDCGM}, false, "1 while a row remap waits for a GPU reset."},
	{MetricRowRemapFailed, CountedPerDevice, Gauge, UnitRatio, "int", nil, []string{EmitterDCGM}, false, "1 once a row remap has failed (replace the GPU)."},
	{MetricProcessMemoryUsage, CountedPerPartition, Gauge, UnitBytes, "int", []string{AttrProcessPID}, []string{EmitterDCGM}, false, "Device memory used by one process (compute or MPS client)."},
	{MetricProcessUtilization, CountedPerPartition, Gauge, UnitRatio, "double", []string{AttrProcessPID}, []string{EmitterDCGM}, false, "SM utilization of one process over the interval."},
	{MetricMPSDaemonUp, CountedPerNode, Gauge, UnitRatio, "int", nil, []string{EmitterDCGM}, false, "1 when the MPS control daemon answers."},
	{MetricMPSServers, CountedPerNode, Gauge, UnitServers, "int", nil, []string{EmitterDCGM}, false, "MPS servers the control daemon runs."},
	{MetricMPSActiveThreads, CountedPerNode, Gauge, UnitRatio, "double", nil, []string{EmitterDCGM}, false, "Default active-thread percentage of the MPS daemon, as a fraction."},
	{MetricExecutionLatency, CountedPerPartition, Gauge, UnitSeconds, "double", []string{AttrLatencyKind, AttrLatencyPercentile, AttrProcessPID}, []string{EmitterNeuron}, false, "Neuron execution latency percentiles over the last period."},
	{MetricExecutions, CountedPerPartition, Counter, UnitExecutions, "int", []string{AttrExecutionStatus, AttrProcessPID}, []string{EmitterNeuron}, false, "Neuron executions by outcome."},
	{MetricExecutionErrors, CountedPerPartition, Counter, UnitErrors, "int", []string{AttrErrorType, AttrProcessPID}, []string{EmitterNeuron}, false, "Neuron execution errors by class."},
	{MetricRuntimeCPU, CountedPerPartition, Gauge, UnitRatio, "double", []string{AttrCPUMode, AttrProcessPID}, []string{EmitterNeuron}, false, "vCPU use of a Neuron runtime."},
	{MetricRuntimeMemory, CountedPerPartition, UpDownCounter, UnitBytes, "int", []string{AttrMemoryLocation, AttrProcessPID}, []string{EmitterNeuron}, false, "Memory used by a Neuron runtime, host or device."},

	{MetricTimeToFirstToken, CountedPerServer, Histogram, UnitSeconds, "double", nil, []string{EmitterInference}, true, "Time to first token, buckets as the server reports them."},
	{MetricTimePerOutputToken, CountedPerServer, Histogram, UnitSeconds, "double", nil, []string{EmitterInference}, true, "Mean time per output token of each request (after the first)."},
	{MetricInterTokenLatency, CountedPerServer, Histogram, UnitSeconds, "double", nil, []string{EmitterInference}, false, "Latency between consecutive output tokens (per decode step)."},
	{MetricRequestDuration, CountedPerServer, Histogram, UnitSeconds, "double", nil, []string{EmitterInference}, true, "End-to-end request duration. Triton's microsecond counters become a bucketless histogram (sum and count)."},
	{MetricQueueDuration, CountedPerServer, Histogram, UnitSeconds, "double", nil, []string{EmitterInference}, false, "Time requests waited in the server's queue."},
	{MetricRequestsRunning, CountedPerServer, Gauge, UnitRequests, "int", nil, []string{EmitterInference}, false, "Requests being executed."},
	{MetricRequestsWaiting, CountedPerServer, Gauge, UnitRequests, "int", nil, []string{EmitterInference}, false, "Requests waiting in the queue."},
	{MetricRequests, CountedPerServer, Counter, UnitRequests, "int", []string{AttrFinishReason}, []string{EmitterInference}, false, "Finished requests by outcome."},
	{MetricKVCacheUtilization, CountedPerServer, Gauge, UnitRatio, "double", nil, []string{EmitterInference}, false, "Fraction of the KV cache in use."},
	{MetricPrefixCacheHitRatio, CountedPerServer, Gauge, UnitRatio, "double", nil, []string{EmitterInference}, false, "Prefix-cache hits / queries over the last interval (or the server's own gauge)."},
	{MetricPrefixCacheQueries, CountedPerServer, Counter, UnitTokens, "int", nil, []string{EmitterInference}, false, "Tokens looked up in the prefix cache."},
	{MetricPrefixCacheHits, CountedPerServer, Counter, UnitTokens, "int", nil, []string{EmitterInference}, false, "Tokens found in the prefix cache."},
	{MetricTokens, CountedPerServer, Counter, UnitTokens, "int", []string{AttrTokenType}, []string{EmitterInference}, false, "Tokens processed, by type."},
	{MetricPreemptions, CountedPerServer, Counter, UnitPreemptions, "int", nil, []string{EmitterInference}, false, "Requests preempted (KV-cache pressure)."},

	{MetricAllocationShare, CountedPerHolding, Gauge, UnitRatio, "double", nil, []string{EmitterAttributes}, false, "The part of the physical device this resource's holder holds (its `accelerator.partition.share`): one series per holding, naming the holder (`k8s.*`, `accelerator.team`, `accelerator.workload.*`) or, with `accelerator.allocation.state`, nobody or a placeholder. `sum by (k8s.pod.name)` is the devices each pod holds."},

	{MetricPrice, CountedPerShare, Gauge, UnitUSDPerHour, "double", nil, []string{EmitterCost}, false, "Price of this device or partition per hour (device price × share)."},
	{MetricCost, CountedPerShare, Counter, UnitUSD, "double", nil, []string{EmitterCost}, false, "Cost accrued: price × elapsed hours."},
	{MetricWaste, CountedPerShare, Counter, UnitUSD, "double", []string{AttrWasteReason}, []string{EmitterCost}, false, "Part of the cost that bought nothing, by reason."},
	{MetricFindings, CountedPerShare, Counter, UnitFindings, "int", []string{AttrFindingKind}, []string{EmitterCost}, false, "Findings raised, by kind."},
}
