package acceleratorremediationexporter

import (
	"context"
	"fmt"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ecs"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/awsexec"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
)

// addAWS registers the AWS executors when aws.enabled. Credentials come
// from the SDK's default chain (IRSA, Pod Identity, the instance profile).
func (e *remediationExporter) addAWS(ctx context.Context, execs executor.Set) error {
	if !e.cfg.AWS.Enabled {
		return nil
	}
	var opts []func(*awsconfig.LoadOptions) error
	if e.cfg.AWS.Region != "" {
		opts = append(opts, awsconfig.WithRegion(e.cfg.AWS.Region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return fmt.Errorf("accelerator_remediation: aws: %w", err)
	}
	if cfg.Region == "" {
		return fmt.Errorf("accelerator_remediation: aws: no region: set aws.region or AWS_REGION")
	}
	var endpoint *string
	if e.cfg.AWS.Endpoint != "" {
		endpoint = &e.cfg.AWS.Endpoint
	}
	execs.Add(
		awsexec.Reboot{Client: ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = endpoint })},
		awsexec.MarkUnhealthy{Client: autoscaling.NewFromConfig(cfg, func(o *autoscaling.Options) { o.BaseEndpoint = endpoint })},
		awsexec.DrainECS{Client: ecs.NewFromConfig(cfg, func(o *ecs.Options) { o.BaseEndpoint = endpoint })},
	)
	return nil
}
