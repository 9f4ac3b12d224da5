package xid

import (
	"fmt"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// Step is one kind of remediation action. The accelerator_remediation
// exporter has one executor per step; its modes and guard rails are keyed by
// these names, so they are part of the configuration's vocabulary.
type Step string

const (
	// StepSetNodeCondition sets the node condition AcceleratorHealthy=False
	// with the failure mode as its reason, so schedulers and humans see why.
	StepSetNodeCondition Step = "set_node_condition"
	// StepRecordEvent records a Kubernetes Event on the node.
	StepRecordEvent Step = "record_event"
	// StepTaintDevice taints only the failed device (a DRA DeviceTaintRule),
	// where the cluster serves device taints.
	StepTaintDevice Step = "taint_device"
	// StepCordonNode taints and cordons the node: nothing new lands on it.
	StepCordonNode Step = "cordon_node"
	// StepEvictHolders evicts only the pods holding the failed device,
	// through the Eviction API (PodDisruptionBudgets respected).
	StepEvictHolders Step = "evict_holders"
	// StepDrainNode evicts every evictable pod of the node (node-wide faults).
	StepDrainNode Step = "drain_node"
	// StepRestartWorkload evicts the holder's pod so that its controller
	// starts a fresh one: application faults, the device is fine.
	StepRestartWorkload Step = "restart_workload"
	// StepResetGPU resets the GPU on its node once nothing holds it.
	StepResetGPU Step = "reset_gpu"
	// StepRebootInstance reboots the EC2 instance.
	StepRebootInstance Step = "reboot_instance"
	// StepMarkUnhealthy marks the instance unhealthy for replacement (EC2
	// Auto Scaling SetInstanceHealth).
	StepMarkUnhealthy Step = "mark_instance_unhealthy"
	// StepDrainECSInstance sets an ECS container instance to DRAINING.
	StepDrainECSInstance Step = "drain_ecs_instance"
	// StepEscalate posts the incident bundle to the configured webhook.
	StepEscalate Step = "escalate"
)

// Steps lists every step kind in the order a plan may use them.
var Steps = []Step{
	StepSetNodeCondition, StepRecordEvent, StepTaintDevice, StepCordonNode,
	StepEvictHolders, StepDrainNode, StepRestartWorkload, StepResetGPU,
	StepRebootInstance, StepMarkUnhealthy, StepDrainECSInstance, StepEscalate,
}

// Disruptive reports whether a step changes what runs or where it can run
// (as opposed to only telling: a condition, an event, an escalation). Guard
// rails count and limit the disruptive ones.
func (st Step) Disruptive() bool {
	switch st {
	case StepSetNodeCondition, StepRecordEvent, StepEscalate:
		return false
	}
	return true
}

// Scope is how much of the node a plan takes out of service.
type Scope string

const (
	// ScopeNone: nothing is taken out of service (application faults).
	ScopeNone Scope = "none"
	// ScopeDevice: only the failed device and its holders.
	ScopeDevice Scope = "device"
	// ScopeNode: the whole node (the fault reaches beyond one device).
	ScopeNode Scope = "node"
)

// PlanStep is one ordered step of a remediation plan and why it is there.
type PlanStep struct {
	Step   Step
	Reason string
}

// RemediationPlan is the catalogue's ordered list of steps for one
// classification.
type RemediationPlan struct {
	Action      string
	FailureMode string
	Scope       Scope
	Steps       []PlanStep
}

func st(step Step, reason string) PlanStep { return PlanStep{Step: step, Reason: reason} }

// Steps shared by several plans, with the reason each one is there.
var (
	tell        = st(StepSetNodeCondition, "schedulers, autoscalers and operators see the node's accelerator is unhealthy and why")
	record      = st(StepRecordEvent, "the node's event stream records what was found and what the plan does")
	taintDevice = st(StepTaintDevice, "no new claim is allocated the failed device; the node's healthy devices keep serving")
	cordon      = st(StepCordonNode, "no new pod lands on a node whose fault reaches beyond one device")
	evict       = st(StepEvictHolders, "only the pods holding the failed device lose it; their controllers reschedule them")
	drain       = st(StepDrainNode, "a node-wide fault affects every pod on the node")
	escalate    = st(StepEscalate, "a human or an investigation agent gets the evidence (device, holders, plan, metrics, events)")
)

// plans: the action internal/xid recommends → the steps that carry it out.
// The order matters: tell first, fence the device or node so that nothing
// new lands on it, move the work off, then repair, and escalate what needs a
// person. Steps that do not apply where the device runs (no Kubernetes node,
// no EC2 instance, no ECS cluster) are skipped when the plan is made.
var plans = map[string]RemediationPlan{
	s.ActionRestartApp: {Scope: ScopeNone, Steps: []PlanStep{
		record,
		st(StepRestartWorkload, "an application fault: a fresh pod of the same workload clears it; the device is fine"),
	}},
	s.ActionResetGPU: {Scope: ScopeDevice, Steps: []PlanStep{
		tell, record, taintDevice, evict,
		st(StepResetGPU, "a GPU reset clears the fault once nothing holds the device"),
	}},
	s.ActionDrainAndReset: {Scope: ScopeDevice, Steps: []PlanStep{
		tell, record, taintDevice, evict,
		st(StepResetGPU, "the reset applies the pending row remap or page retirement"),
	}},
	s.ActionRebootNode: {Scope: ScopeNode, Steps: []PlanStep{
		tell, record, cordon, drain,
		st(StepRebootInstance, "the device is unreachable until the instance restarts"),
	}},
	s.ActionReplaceDevice: {Scope: ScopeNode, Steps: []PlanStep{
		tell, record, cordon, drain,
		st(StepMarkUnhealthy, "the device has reached its repair limit: the instance is replaced"),
		escalate,
	}},
	s.ActionCheckHardware: {Scope: ScopeNode, Steps: []PlanStep{
		tell, record, cordon,
		st(StepEscalate, "cabling, power or cooling need a person"),
	}},
	s.ActionRestartService: {Scope: ScopeNode, Steps: []PlanStep{
		tell, record, cordon,
		st(StepDrainECSInstance, "ECS places no new task on a DRAINING instance and moves service tasks off it before replacement"),
		st(StepMarkUnhealthy, "the node service does not come back by itself: the instance is replaced"),
	}},
	s.ActionInvestigate: {Scope: ScopeNone, Steps: []PlanStep{
		record,
		st(StepEscalate, "the message is of a form the catalogue does not know: a person reads its raw lines before anything is done"),
	}},
	s.ActionContactSupport: {Scope: ScopeNone, Steps: []PlanStep{
		record,
		st(StepEscalate, "the fault is not one the catalogue knows how to repair: collect a bug report and contact the vendor"),
	}},
}

// nodeWide are failure modes whose plan takes the whole node out of service
// even where the action alone would act on one device: an NVLink or NVSwitch
// fault breaks traffic between the node's devices, not inside one.
var nodeWide = map[string]bool{
	s.FailureModeInterconnect: true,
}

// PlanFor returns the catalogue's plan for a classification, and false when
// there is nothing to do (actions none and monitor).
func PlanFor(c Classification) (RemediationPlan, bool) {
	p, ok := plans[c.Action]
	if !ok {
		return RemediationPlan{}, false
	}
	p.Action, p.FailureMode = c.Action, c.FailureMode
	if p.Scope == ScopeDevice && nodeWide[c.FailureMode] {
		p.Scope = ScopeNode
		steps := make([]PlanStep, 0, len(p.Steps))
		for _, ps := range p.Steps {
			switch ps.Step {
			case StepTaintDevice:
				ps = cordon
			case StepEvictHolders:
				ps = st(StepDrainNode, fmt.Sprintf("a %s fault affects every device of the node and the pods using them", c.FailureMode))
			}
			steps = append(steps, ps)
		}
		p.Steps = steps
	} else {
		p.Steps = append([]PlanStep(nil), p.Steps...)
	}
	return p, true
}
