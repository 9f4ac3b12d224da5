package e2etest

import (
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/cwotlptest"
)

// CloudWatchOTLP is CloudWatch's OTLP metrics and logs endpoints on
// loopback (cwotlptest) for the built binary's otlp_http exporters: point
// their metrics_endpoint and logs_endpoint at URL+cwotlptest.MetricsPath
// and URL+cwotlptest.LogsPath, and give the collector the credentials the
// fake verifies signatures with through Env.
type CloudWatchOTLP struct {
	*cwotlptest.Server
}

// StartCloudWatchOTLP starts the fake for region until the test ends.
func StartCloudWatchOTLP(t testing.TB, region string) *CloudWatchOTLP {
	t.Helper()
	c := &CloudWatchOTLP{cwotlptest.New(region, cwotlptest.Credentials{
		AccessKeyID: TestAccessKeyID, SecretAccessKey: TestSecretAccessKey,
	})}
	t.Cleanup(c.Close)
	return c
}

// Env gives the collector the static test credentials and the region.
func (c *CloudWatchOTLP) Env() []string { return AWSTestEnv(c.Region) }
