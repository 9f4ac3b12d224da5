package kube

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Condition sets AcceleratorHealthy=False on the node with the failure mode
// as its reason. A strategic-merge patch of the status subresource merges
// by condition type, so the kubelet's own conditions are left alone and a
// concurrent status update cannot conflict with it.
type Condition struct{ *Cluster }

func (Condition) Step() xid.Step                        { return xid.StepSetNodeCondition }
func (Condition) Applies(s plan.Subject) (bool, string) { return onNode(s) }
func (Condition) Idempotent() bool                      { return true }

func (c Condition) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	now := metav1.Now()
	cond := corev1.NodeCondition{
		Type:               ConditionType,
		Status:             corev1.ConditionFalse,
		Reason:             reason(p.FailureMode),
		Message:            fmt.Sprintf("%s on %s: %s (plan %s, action %s)", p.Evidence.Event, deviceName(p.Subject), p.Evidence.Description, p.ID, p.Action),
		LastHeartbeatTime:  now,
		LastTransitionTime: now,
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}})
	if err != nil {
		return executor.Outcome{}, err
	}
	_, err = c.CS.CoreV1().Nodes().Patch(ctx, p.Subject.Node, types.StrategicMergePatchType, patch,
		metav1.PatchOptions{DryRun: dryRun(dry), FieldManager: c.Component}, "status")
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("node %s: condition %s: %w", p.Subject.Node, ConditionType, err)
	}
	return executor.Outcome{Detail: fmt.Sprintf("node %s: %s=False reason %s", p.Subject.Node, ConditionType, cond.Reason)}, nil
}

// reason turns a failure mode (device_lost) into a condition reason
// (DeviceLost): reasons are CamelCase by convention.
func reason(mode string) string {
	out := make([]rune, 0, len(mode))
	up := true
	for _, r := range mode {
		if r == '_' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		out = append(out, r)
	}
	if len(out) == 0 {
		return "Unknown"
	}
	return string(out)
}

func deviceName(s plan.Subject) string {
	if s.DeviceID == "" {
		return "the node"
	}
	return s.DeviceID
}
