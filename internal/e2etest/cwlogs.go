package e2etest

import (
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/cwlogstest"
)

// CloudWatchLogs is the CloudWatch Logs API on loopback (cwlogstest, the
// fake the exporter's own tests use) for the built binary's cloudwatch_emf
// exporter: set its `endpoint:` to URL and give the collector credentials
// with CloudWatchEnv. Only the wire is shared with the collector, a child
// process, so everything a test learns comes from the fake's record.
type CloudWatchLogs struct {
	*cwlogstest.Server
}

// StartCloudWatchLogs starts the fake for region until the test ends. It
// stores every event; a load run passes cwlogstest.CountOnly() to have them
// only counted. It verifies every request's signature with the test
// credentials CloudWatchEnv gives the collector, as CloudWatch would.
func StartCloudWatchLogs(t testing.TB, region string, opts ...cwlogstest.Option) *CloudWatchLogs {
	t.Helper()
	opts = append([]cwlogstest.Option{cwlogstest.VerifySignatures(TestAccessKeyID, TestSecretAccessKey)}, opts...)
	c := &CloudWatchLogs{cwlogstest.New(region, opts...)}
	t.Cleanup(c.Close)
	return c
}

// CloudWatchEnv is the environment that gives the AWS SDK in the collector
// static test credentials and the fake's region, and keeps it from reading
// the machine's own AWS configuration.
func (c *CloudWatchLogs) CloudWatchEnv() []string { return AWSTestEnv(c.Region) }
