package kube

import (
	"context"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// DeviceTaint taints just the failed device with a DRA DeviceTaintRule
// (resource.k8s.io/v1, GA in Kubernetes 1.37) so that the scheduler
// allocates it to no new claim, while the node's other devices keep
// serving. It needs the device's DRA identity (driver, pool, device) from
// the event and a cluster that serves the API; otherwise the step is
// skipped with the reason. The rule is named after the plan, so a resumed
// plan finds it.
type DeviceTaint struct{ *Cluster }

func (DeviceTaint) Step() xid.Step { return xid.StepTaintDevice }

func (DeviceTaint) Applies(s plan.Subject) (bool, string) {
	if ok, why := onNode(s); !ok {
		return ok, why
	}
	if s.DRADriver == "" || s.DRAPool == "" || s.DRADevice == "" {
		return false, "the device is not allocated through DRA (no accelerator.dra.driver/pool/device): no device taint"
	}
	return true, ""
}

func (DeviceTaint) Idempotent() bool { return true }

func (d DeviceTaint) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	served, err := d.served()
	if err != nil {
		return executor.Outcome{}, err
	}
	if !served {
		return executor.Outcome{Skipped: true, Detail: "the cluster does not serve resource.k8s.io/v1 devicetaintrules"}, nil
	}
	s := p.Subject
	rule := &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: p.ID, Labels: map[string]string{"app.kubernetes.io/managed-by": d.Component}},
		Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: &s.DRADriver, Pool: &s.DRAPool, Device: &s.DRADevice},
			Taint: resourcev1.DeviceTaint{
				Key: d.TaintKey(), Value: p.FailureMode, Effect: resourcev1.DeviceTaintEffectNoSchedule,
			},
		},
	}
	_, err = d.CS.ResourceV1().DeviceTaintRules().Create(ctx, rule, metav1.CreateOptions{DryRun: dryRun(dry), FieldManager: d.Component})
	if apierrors.IsAlreadyExists(err) {
		return executor.Outcome{Skipped: true, Detail: "DeviceTaintRule " + p.ID + " already there"}, nil
	}
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("DeviceTaintRule %s: %w", p.ID, err)
	}
	return executor.Outcome{Detail: fmt.Sprintf("DeviceTaintRule %s: %s/%s/%s tainted %s=%s:NoSchedule", p.ID, s.DRADriver, s.DRAPool, s.DRADevice, d.TaintKey(), p.FailureMode)}, nil
}

func (d DeviceTaint) served() (bool, error) {
	list, err := d.CS.Discovery().ServerResourcesForGroupVersion(resourcev1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovery of %s: %w", resourcev1.SchemeGroupVersion, err)
	}
	for _, r := range list.APIResources {
		if r.Name == "devicetaintrules" {
			return true, nil
		}
	}
	return false, nil
}
