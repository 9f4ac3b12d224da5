package accelschema

// What the accelerator_k8s receiver says of autoscalers and of capacity
// Karpenter could not launch (issue 19): an HPA's decisions as log
// records, joined to the scaling of the workload they scale.

// EventAutoscaler is an HPA's decision about an accelerator workload: its
// wanted or current replicas, last scale time or conditions changed.
const EventAutoscaler = "accelerator.k8s.autoscaler"

// Attributes of autoscaler records, and of scaling records an HPA decided.
const (
	AttrAutoscalerName          = "accelerator.autoscaler.name"
	AttrAutoscalerDesired       = "accelerator.autoscaler.desired_replicas"
	AttrAutoscalerCurrent       = "accelerator.autoscaler.current_replicas"
	AttrAutoscalerMin           = "accelerator.autoscaler.min_replicas"
	AttrAutoscalerMax           = "accelerator.autoscaler.max_replicas"
	AttrAutoscalerLastScaleTime = "accelerator.autoscaler.last_scale_time"
	AttrAutoscalerConditions    = "accelerator.autoscaler.conditions"
	AttrAutoscalerLimited       = "accelerator.autoscaler.limited"
	AttrAutoscalerUnable        = "accelerator.autoscaler.unable"
	AttrScalingDecidedBy        = "accelerator.scaling.decided_by"
	// AttrCapacityNodeClaim names the Karpenter NodeClaim of an
	// insufficient-capacity record.
	AttrCapacityNodeClaim = "accelerator.capacity.nodeclaim"

	ScalingDecidedByHPA     = "hpa"
	ScalingDecidedByUnknown = "unknown"
)

var EnumScalingDecidedBy = Enum{AttrScalingDecidedBy, []EnumValue{
	{ScalingDecidedByHPA, "an HPA targets the workload: the decision time is its status.lastScaleTime"},
	{ScalingDecidedByUnknown, "no HPA was seen (a person, KEDA through its own HPA not yet seen, a controller): the decision time is when the receiver saw spec.replicas change"},
}}

func init() {
	Attributes = append(Attributes,
		AttributeDef{AttrAutoscalerName, "string", ScopeLog, nil, false, "On an autoscaler or scaling record: the HorizontalPodAutoscaler (autoscaling/v2) that scales the workload."},
		AttributeDef{AttrAutoscalerDesired, "int", ScopeLog, nil, false, "On an autoscaler record: the HPA's status.desiredReplicas."},
		AttributeDef{AttrAutoscalerCurrent, "int", ScopeLog, nil, false, "On an autoscaler record: the HPA's status.currentReplicas."},
		AttributeDef{AttrAutoscalerMin, "int", ScopeLog, nil, false, "On an autoscaler record: the HPA's spec.minReplicas (1 when unset)."},
		AttributeDef{AttrAutoscalerMax, "int", ScopeLog, nil, false, "On an autoscaler record: the HPA's spec.maxReplicas."},
		AttributeDef{AttrAutoscalerLastScaleTime, "string", ScopeLog, nil, false, "On an autoscaler record: the HPA's status.lastScaleTime (RFC 3339), absent when it never scaled."},
		AttributeDef{AttrAutoscalerConditions, "string", ScopeLog, nil, false, "On an autoscaler record: the HPA's conditions as `Type=Status(Reason)`, space-separated."},
		AttributeDef{AttrAutoscalerLimited, "bool", ScopeLog, nil, false, "On an autoscaler record: ScalingLimited is True (the wanted count is held at min or max replicas)."},
		AttributeDef{AttrAutoscalerUnable, "bool", ScopeLog, nil, false, "On an autoscaler record: AbleToScale or ScalingActive is False (the HPA cannot act now)."},
		AttributeDef{AttrScalingDecidedBy, "string", ScopeLog, &EnumScalingDecidedBy, false, "On a scaling record: who decided the replica change, which sets the decision time."},
		AttributeDef{AttrCapacityNodeClaim, "string", ScopeLog, nil, false, "On an insufficient-capacity record from Karpenter: the NodeClaim that could not be launched."},
	)
	EnumEventName.Values = append(EnumEventName.Values,
		EnumValue{EventAutoscaler, "an HPA scaling an accelerator workload changed its decision (wanted or current replicas, last scale time, conditions)"})
}
