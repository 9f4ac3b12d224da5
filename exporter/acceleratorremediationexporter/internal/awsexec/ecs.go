package awsexec

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// DrainECS sets the instance's ECS container instance to DRAINING: ECS
// places no new task on it and moves service tasks off it, before the
// instance is replaced. The container instance is found by its EC2
// instance id in the event's cluster. ECS has no dry run: in dry-run mode
// only the lookup is made.
type DrainECS struct{ Client *ecs.Client }

func (DrainECS) Step() xid.Step { return xid.StepDrainECSInstance }

func (DrainECS) Applies(s plan.Subject) (bool, string) {
	if s.ECSCluster == "" {
		return false, "the device is not in an ECS cluster (no aws.ecs.cluster.arn)"
	}
	return onInstance(s)
}

func (DrainECS) Idempotent() bool { return true }

func (d DrainECS) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	s := p.Subject
	list, err := d.Client.ListContainerInstances(ctx, &ecs.ListContainerInstancesInput{
		Cluster: &s.ECSCluster, Filter: new("ec2InstanceId == " + s.InstanceID),
	})
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("ecs ListContainerInstances %s in %s: %w", s.InstanceID, s.ECSCluster, err)
	}
	if len(list.ContainerInstanceArns) == 0 {
		return executor.Outcome{Skipped: true, Detail: "no container instance of " + s.InstanceID + " in " + s.ECSCluster}, nil
	}
	if dry {
		return executor.Outcome{Detail: "dry run: ECS would drain " + list.ContainerInstanceArns[0]}, nil
	}
	out, err := d.Client.UpdateContainerInstancesState(ctx, &ecs.UpdateContainerInstancesStateInput{
		Cluster: &s.ECSCluster, ContainerInstances: list.ContainerInstanceArns, Status: ecstypes.ContainerInstanceStatusDraining,
	})
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("ecs UpdateContainerInstancesState %s: %w", s.InstanceID, err)
	}
	if len(out.Failures) > 0 {
		f := out.Failures[0]
		return executor.Outcome{}, fmt.Errorf("ecs UpdateContainerInstancesState %s: %s (%s)", deref(f.Arn), deref(f.Reason), deref(f.Detail))
	}
	return executor.Outcome{Detail: fmt.Sprintf("ECS container instance %s DRAINING", list.ContainerInstanceArns[0])}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
