package output

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// LogsAPI is the part of the CloudWatch Logs API the exporter uses; the
// aws-sdk-go-v2 client implements it.
type LogsAPI interface {
	PutLogEvents(ctx context.Context, in *cloudwatchlogs.PutLogEventsInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutLogEventsOutput, error)
	CreateLogGroup(ctx context.Context, in *cloudwatchlogs.CreateLogGroupInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogGroupOutput, error)
	CreateLogStream(ctx context.Context, in *cloudwatchlogs.CreateLogStreamInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogStreamOutput, error)
	PutRetentionPolicy(ctx context.Context, in *cloudwatchlogs.PutRetentionPolicyInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutRetentionPolicyOutput, error)
}

// ClientConfig says how to reach CloudWatch Logs.
type ClientConfig struct {
	// Region; empty means the SDK's default chain (AWS_REGION, shared
	// config) and then the EC2 instance metadata service.
	Region string
	// Endpoint overrides the CloudWatch Logs endpoint (VPC endpoints,
	// LocalStack, tests).
	Endpoint string
	// RoleARN, when set, is assumed with STS on top of the default
	// credentials chain.
	RoleARN string
}

// NewLogsClient builds a CloudWatch Logs client. The SDK's own retries are
// switched off: retries are the collector's (retry_on_failure), so that a
// throttled or unreachable endpoint backs off under one policy and data waits
// in the sending queue rather than in a blocked call.
func NewLogsClient(ctx context.Context, cfg ClientConfig) (LogsAPI, string, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
	}
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("loading AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		// Not in the config or the environment: ask the instance metadata
		// service, as the SDK does not by default.
		withIMDS, imdsErr := config.LoadDefaultConfig(ctx, append(opts, config.WithEC2IMDSRegion())...)
		if imdsErr != nil || withIMDS.Region == "" {
			return nil, "", fmt.Errorf("no AWS region: set `region` in the cloudwatch_emf exporter, or AWS_REGION in its environment (instance metadata: %v)", imdsErr)
		}
		awsCfg = withIMDS
	}
	if cfg.RoleARN != "" {
		stsClient := sts.NewFromConfig(awsCfg, func(o *sts.Options) { o.Retryer = retry.NewStandard() })
		awsCfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(stsClient, cfg.RoleARN,
			func(o *stscreds.AssumeRoleOptions) { o.RoleSessionName = "otelcol-accel-cloudwatch-emf" }))
	}
	client := cloudwatchlogs.NewFromConfig(awsCfg, func(o *cloudwatchlogs.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
	})
	return client, awsCfg.Region, nil
}
