package awsexec

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Reboot reboots the EC2 instance (RebootInstances), for a device that is
// unreachable until the instance restarts. It is not idempotent: found
// interrupted on resume, its plan stops and is escalated rather than
// rebooting the instance a second time.
type Reboot struct{ Client *ec2.Client }

func (Reboot) Step() xid.Step                        { return xid.StepRebootInstance }
func (Reboot) Applies(s plan.Subject) (bool, string) { return onInstance(s) }
func (Reboot) Idempotent() bool                      { return false }

func (r Reboot) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	_, err := r.Client.RebootInstances(ctx, &ec2.RebootInstancesInput{InstanceIds: []string{p.Subject.InstanceID}, DryRun: &dry})
	if dry && dryRunPassed(err) {
		return executor.Outcome{Detail: "dry run: EC2 would reboot " + p.Subject.InstanceID}, nil
	}
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("ec2 RebootInstances %s: %w", p.Subject.InstanceID, err)
	}
	return executor.Outcome{Detail: "EC2 instance " + p.Subject.InstanceID + " rebooting"}, nil
}
