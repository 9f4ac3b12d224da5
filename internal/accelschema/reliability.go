package accelschema

// Names of what the accelerator_k8s receiver reports about an inference
// endpoint's life on Kubernetes (issue 19): cold starts and pods that cannot
// be scheduled for want of accelerators. They are registered with the
// others (init below), in a file of their own because one component sets
// them.

import (
	"strconv"
	"strings"
)

// EmitterK8s is the accelerator_k8s receiver.
const EmitterK8s = "accelerator_k8s"

// Metrics.
const (
	MetricColdStartDuration = "accelerator.inference.cold_start.duration"
	MetricPodsUnschedulable = "accelerator.k8s.pods.unschedulable"
)

// Units.
const UnitPods = "{pod}"

// Attributes.
const (
	AttrColdStartPhase        = "accelerator.cold_start.phase"
	AttrCapacityResource      = "accelerator.capacity.resource"
	AttrCapacityInstanceType  = "accelerator.capacity.instance_type"
	AttrCapacityZone          = "accelerator.capacity.zone"
	AttrCapacitySource        = "accelerator.capacity.source"
	AttrK8sReason             = "accelerator.k8s.reason"
	attrColdStartPhasePrefix  = "accelerator.cold_start."
	attrColdStartPhaseSeconds = ".duration"
)

// Cold-start phases, in the order a pod goes through them.
const (
	PhaseScheduling     = "scheduling"
	PhaseImagePull      = "image_pull"
	PhaseContainerStart = "container_start"
	PhaseReadiness      = "readiness"
	PhaseFirstRequest   = "first_request"
	PhaseTotal          = "total"
)

// ColdStartPhases lists the phases in order.
var ColdStartPhases = []string{PhaseScheduling, PhaseImagePull, PhaseContainerStart, PhaseReadiness, PhaseFirstRequest, PhaseTotal}

// ColdStartPhaseAttr is the log-record attribute holding one phase's
// duration in seconds (accelerator.cold_start.<phase>.duration).
func ColdStartPhaseAttr(phase string) string {
	return attrColdStartPhasePrefix + phase + attrColdStartPhaseSeconds
}

// Where an unschedulable pod was reported.
const (
	CapacitySourceScheduler = "scheduler"
	CapacitySourceKarpenter = "karpenter"
)

// Event names.
const (
	EventColdStart     = "accelerator.k8s.cold_start"
	EventUnschedulable = "accelerator.k8s.unschedulable"
)

var (
	EnumColdStartPhase = Enum{AttrColdStartPhase, []EnumValue{
		{PhaseScheduling, "created → scheduled (the PodScheduled condition)"},
		{PhaseImagePull, "the image pulls' own durations, as the kubelet's Pulled events report them (0 when every image was already present)"},
		{PhaseContainerStart, "scheduled, and images pulled → the last container started"},
		{PhaseReadiness, "the last container started → Ready"},
		{PhaseFirstRequest, "Ready → the first finished request the inference receiver saw in the same collector (at the scrape that saw it: up to one collection interval late)"},
		{PhaseTotal, "created → Ready"},
	}}
	EnumCapacitySource = Enum{AttrCapacitySource, []EnumValue{
		{CapacitySourceScheduler, "the scheduler's FailedScheduling (the pod's PodScheduled condition is False, reason Unschedulable)"},
		{CapacitySourceKarpenter, "a Karpenter NodeClaim could not be launched for want of capacity"},
	}}
)

var reliabilityMetrics = []MetricDef{
	{MetricColdStartDuration, CountedPerWorkload, Histogram, UnitSeconds, "double", []string{AttrColdStartPhase}, []string{EmitterK8s}, false,
		"Time an accelerator pod took, per phase, from creation to Ready, one observation per cold start; phases measured from the pod's conditions and the kubelet's Pulled events."},
	{MetricPodsUnschedulable, CountedPerWorkload, Gauge, UnitPods, "int", []string{AttrCapacityResource, AttrCapacityInstanceType, AttrCapacityZone, AttrCapacitySource}, []string{EmitterK8s}, false,
		"Pods requesting accelerators that cannot be scheduled now, by the accelerator resource they lack and the instance type and zone they ask for (`any` when they do not ask); with source `karpenter`, Karpenter NodeClaims for accelerators that could not be launched for want of capacity (counted at least once, at the flush after Karpenter deleted them)."},
}

func reliabilityAttributes() []AttributeDef {
	defs := []AttributeDef{
		{AttrColdStartPhase, "string", ScopeDataPoint, &EnumColdStartPhase, false, "Phase of a cold start."},
		{AttrCapacityResource, "string", ScopeDataPoint, nil, false, "Accelerator resource a pod cannot get: `nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`, `aws.amazon.com/neuron`, or `dra:<device class>` for a DRA claim."},
		{AttrCapacityInstanceType, "string", ScopeDataPoint, nil, false, "Instance type the pod asks for (node selector or required node affinity), `any` when it does not."},
		{AttrCapacityZone, "string", ScopeDataPoint, nil, false, "Availability zone the pod asks for, `any` when it does not."},
		{AttrCapacitySource, "string", ScopeDataPoint, &EnumCapacitySource, false, "Who reported the pod unschedulable."},
		{AttrK8sReason, "string", ScopeLog, nil, false, "On an unschedulable event: the Kubernetes reason (`FailedScheduling`, `InsufficientCapacityError`)."},
	}
	for _, phase := range ColdStartPhases {
		defs = append(defs, AttributeDef{ColdStartPhaseAttr(phase), "double", ScopeLog, nil, false,
			"On a cold-start record: the " + phase + " phase in seconds (see `" + AttrColdStartPhase + "`)."})
	}
	return defs
}

func init() {
	Metrics = append(Metrics, reliabilityMetrics...)
	Attributes = append(Attributes, reliabilityAttributes()...)
	EnumEventName.Values = append(EnumEventName.Values,
		EnumValue{EventColdStart, "an accelerator pod became Ready for the first time: every phase of its cold start"},
		EnumValue{EventUnschedulable, "a pod requesting accelerators could not be scheduled, or Karpenter could not launch capacity for it"})
}

// Scaling events: a replica change of an accelerator workload.
const (
	EventScaling               = "accelerator.k8s.scaling"
	AttrScalingFrom            = "accelerator.scaling.from"
	AttrScalingTo              = "accelerator.scaling.to"
	AttrScalingDirection       = "accelerator.scaling.direction"
	AttrScalingOutcome         = "accelerator.scaling.outcome"
	AttrScalingDecisionToReady = "accelerator.scaling.decision_to_ready"

	ScalingUp         = "up"
	ScalingDown       = "down"
	ScalingReady      = "ready"
	ScalingSuperseded = "superseded"
)

var (
	EnumScalingDirection = Enum{AttrScalingDirection, []EnumValue{
		{ScalingUp, "more replicas wanted"},
		{ScalingDown, "fewer replicas wanted"},
	}}
	EnumScalingOutcome = Enum{AttrScalingOutcome, []EnumValue{
		{ScalingReady, "the wanted replicas became ready (scale-up) or were gone (scale-down)"},
		{ScalingSuperseded, "another replica change came before this one settled"},
	}}
)

func init() {
	Attributes = append(Attributes,
		AttributeDef{AttrScalingFrom, "int", ScopeLog, nil, false, "On a scaling event: the replicas wanted before."},
		AttributeDef{AttrScalingTo, "int", ScopeLog, nil, false, "On a scaling event: the replicas wanted now."},
		AttributeDef{AttrScalingDirection, "string", ScopeLog, &EnumScalingDirection, false, "On a scaling event: up or down."},
		AttributeDef{AttrScalingOutcome, "string", ScopeLog, &EnumScalingOutcome, false, "On a scaling event: how it ended."},
		AttributeDef{AttrScalingDecisionToReady, "double", ScopeLog, nil, false,
			"On a scaling event: seconds from the decision (the HPA's `status.lastScaleTime` when an HPA scales the workload, else when the receiver saw `spec.replicas` change) to the new replicas being ready (the last Ready transition of the workload's pods, else when the receiver saw the ready count reached), or the old ones gone."},
	)
	EnumEventName.Values = append(EnumEventName.Values,
		EnumValue{EventScaling, "the replicas of an accelerator workload (Deployment, StatefulSet, LeaderWorkerSet) changed and settled"})
}

// Zones.
const (
	MetricWorkloadReplicas = "accelerator.k8s.workload.replicas"
	FindingZoneImbalance   = "zone_imbalance"
)

func init() {
	Metrics = append(Metrics, MetricDef{MetricWorkloadReplicas, CountedPerWorkload, Gauge, UnitPods, "int", nil, []string{EmitterK8s}, false,
		"Ready replicas of an accelerator workload in one availability zone (`cloud.availability_zone` on the resource, 0 for a zone that offers its accelerators but holds none)."})
	EnumFindingKind.Values = append(EnumFindingKind.Values,
		EnumValue{FindingZoneImbalance, "an endpoint's replicas are unbalanced across availability zones (accelerator_k8s)"})
}

// Latency-regression diagnosis (internal/latencydiagnosis).
const (
	FindingLatencyRegression = "latency_regression"
	AttrFindingCause         = "accelerator.finding.cause"

	CauseKVCachePressure  = "kv_cache_pressure"
	CauseQueueing         = "queueing"
	CauseDeviceSaturation = "device_saturation"
	CauseThrottling       = "throttling"
	CauseUnhealthyDevice  = "unhealthy_device"
	CauseNoisyNeighbour   = "noisy_neighbour"
	CauseColdReplica      = "cold_replica"
	CauseZoneImbalance    = "zone_imbalance"
	CauseUndetermined     = "undetermined"
)

var EnumFindingCause = Enum{AttrFindingCause, []EnumValue{
	{CauseKVCachePressure, "the KV cache is (nearly) full, with preemptions"},
	{CauseQueueing, "requests wait while the server runs at its concurrency limit"},
	{CauseDeviceSaturation, "the device's SMs or tensor cores are saturated"},
	{CauseThrottling, "the device's clocks are held down for power or heat"},
	{CauseUnhealthyDevice, "the device reported XIDs or uncorrected ECC errors"},
	{CauseNoisyNeighbour, "another consumer of the same time-sliced or MPS device is busy"},
	{CauseColdReplica, "replicas that just became ready serve while cold"},
	{CauseZoneImbalance, "the endpoint's replicas are unbalanced across zones"},
	{CauseUndetermined, "no rule's evidence is present"},
}}

func init() {
	Attributes = append(Attributes, AttributeDef{AttrFindingCause, "string", ScopeLog, &EnumFindingCause, false,
		"On a latency_regression finding: the most likely cause, whose signals are in the evidence."})
	EnumFindingKind.Values = append(EnumFindingKind.Values,
		EnumValue{FindingLatencyRegression, "an endpoint's TTFT or ITL p95 regressed against its own baseline; the cause names why"})
}

// The accelerator_diagnosis processor: latency regressions counted by cause.
const (
	EmitterDiagnosis         = "accelerator_diagnosis"
	MetricLatencyRegressions = "accelerator.inference.latency_regressions"
	UnitRegressions          = "{regression}"
	AttrFindingAlso          = "accelerator.finding.also"
	// AttrFindingNodes names the nodes of an endpoint served from more
	// than one (one node is the resource's k8s.node.name).
	AttrFindingNodes      = "accelerator.finding.nodes"
	AttrInferenceEndpoint = "accelerator.inference.endpoint"
	// AttrRegressionCause is the cause on the metric's data points (the
	// finding's own accelerator.finding.cause is a log attribute).
	AttrRegressionCause = "accelerator.inference.regression.cause"
)

// EnumRegressionCause has the values of EnumFindingCause.
var EnumRegressionCause = Enum{AttrRegressionCause, EnumFindingCause.Values}

func init() {
	Metrics = append(Metrics, MetricDef{MetricLatencyRegressions, CountedPerWorkload, Counter, UnitRegressions, "int", []string{AttrRegressionCause}, []string{EmitterDiagnosis}, false,
		"Latency regressions of an inference endpoint (a latency_regression finding each), by the cause the diagnosis named."})
	Attributes = append(Attributes,
		AttributeDef{AttrRegressionCause, "string", ScopeDataPoint, &EnumRegressionCause, false,
			"Cause of a latency regression, as the finding names it (`accelerator.finding.cause`)."},
		AttributeDef{AttrFindingAlso, "string", ScopeLog, nil, false,
			"On a latency_regression finding: the other causes whose evidence was present, strongest first (comma-separated)."},
		AttributeDef{AttrFindingNodes, "string", ScopeLog, nil, false,
			"On a latency_regression finding of an endpoint served from several nodes: their names (comma-separated, sorted). An endpoint on one node names it in `k8s.node.name`."},
		AttributeDef{AttrInferenceEndpoint, "string", ScopeResource, nil, false,
			"An inference endpoint as the diagnosis keys it: `<namespace>/<workload>`, else `<server.address>:<server.port>` (with `gen_ai.request.model` beside it)."})
}

// maxNamedNodes is how many nodes NodesPhrase names before it only counts
// them.
const maxNamedNodes = 3

// NodesPhrase says where a finding's endpoint runs, for a sentence that
// reads "… on <phrase>": "gpu-a", "2 nodes (gpu-a, gpu-b)", "5 nodes
// (gpu-a, gpu-b, gpu-c, …)"; "" when no node is known. The finding's body
// and the readers of accelerator.finding.nodes say it the same way.
func NodesPhrase(nodes []string) string {
	switch len(nodes) {
	case 0:
		return ""
	case 1:
		return nodes[0]
	}
	named, more := nodes, ""
	if len(named) > maxNamedNodes {
		named, more = named[:maxNamedNodes], ", …"
	}
	return strconv.Itoa(len(nodes)) + " nodes (" + strings.Join(named, ", ") + more + ")"
}
