// Package awsexec holds the AWS executors: reboot the EC2 instance, mark it
// unhealthy in its Auto Scaling group so that it is replaced, and set its
// ECS container instance to DRAINING before replacement (the ECS MPS case).
// They use the real SDK clients; the tests run them against a loopback
// server that speaks the EC2 and Auto Scaling Query and ECS JSON protocols.
package awsexec // import "github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/awsexec"

import (
	"errors"
	"strings"

	"github.com/aws/smithy-go"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

func onInstance(s plan.Subject) (bool, string) {
	if !strings.HasPrefix(s.InstanceID, "i-") {
		return false, "the device's host is not an EC2 instance (no host.id i-…)"
	}
	return true, ""
}

// dryRunPassed: EC2 answers a DryRun request that would have succeeded
// with the DryRunOperation error.
func dryRunPassed(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "DryRunOperation"
}
