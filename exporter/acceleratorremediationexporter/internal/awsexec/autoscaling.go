package awsexec

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// MarkUnhealthy marks the instance Unhealthy in its Auto Scaling group
// (SetInstanceHealth), which replaces it. Marking it twice is harmless.
// Auto Scaling has no dry run: in dry-run mode the call is not made.
type MarkUnhealthy struct{ Client *autoscaling.Client }

func (MarkUnhealthy) Step() xid.Step                        { return xid.StepMarkUnhealthy }
func (MarkUnhealthy) Applies(s plan.Subject) (bool, string) { return onInstance(s) }
func (MarkUnhealthy) Idempotent() bool                      { return true }

func (m MarkUnhealthy) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	if dry {
		return executor.Outcome{Detail: "dry run: Auto Scaling would mark " + p.Subject.InstanceID + " Unhealthy"}, nil
	}
	respect := false
	_, err := m.Client.SetInstanceHealth(ctx, &autoscaling.SetInstanceHealthInput{
		InstanceId: &p.Subject.InstanceID, HealthStatus: new("Unhealthy"), ShouldRespectGracePeriod: &respect,
	})
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("autoscaling SetInstanceHealth %s: %w", p.Subject.InstanceID, err)
	}
	return executor.Outcome{Detail: "instance " + p.Subject.InstanceID + " marked Unhealthy for replacement"}, nil
}
