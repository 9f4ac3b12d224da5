package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Event records a Warning Event on the node (in the default namespace, where
// node events live). Its name is the plan's, so a resumed plan finds it
// already there instead of recording it twice.
type Event struct{ *Cluster }

func (Event) Step() xid.Step                        { return xid.StepRecordEvent }
func (Event) Applies(s plan.Subject) (bool, string) { return onNode(s) }
func (Event) Idempotent() bool                      { return true }

func (e Event) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	now := metav1.Now()
	steps := ""
	for i, s := range p.Steps {
		if i > 0 {
			steps += ", "
		}
		steps += string(s.Kind)
	}
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: p.Subject.Node + "." + p.ID, Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Node", APIVersion: "v1", Name: p.Subject.Node, UID: "",
		},
		Reason:              "Accelerator" + reason(p.FailureMode),
		Message:             fmt.Sprintf("%s on %s: %s; plan %s (%s): %s", p.Evidence.Event, deviceName(p.Subject), p.Evidence.Description, p.ID, p.Action, steps),
		Type:                corev1.EventTypeWarning,
		Source:              corev1.EventSource{Component: e.Component},
		ReportingController: e.Component,
		ReportingInstance:   e.Component,
		Action:              p.Action,
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
	}
	_, err := e.CS.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, ev, metav1.CreateOptions{DryRun: dryRun(dry)})
	if apierrors.IsAlreadyExists(err) {
		return executor.Outcome{Skipped: true, Detail: "event " + ev.Name + " already recorded"}, nil
	}
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("node %s: event: %w", p.Subject.Node, err)
	}
	return executor.Outcome{Detail: "event " + ev.Name + " recorded"}, nil
}
