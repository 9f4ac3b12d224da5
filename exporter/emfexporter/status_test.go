package emfexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componentstatus"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
	"github.com/otelcol-accel/otelcol-accel/internal/cwlogstest"
)

func TestOutageIsReportedAsRecoverableAndRecoveryAsOK(t *testing.T) {
	isolateAWS(t)
	srv := cwlogstest.New("us-east-1", verifySignatures)
	defer srv.Close()
	srv.SetDown(cwlogstest.Unavailable)
	host := &componenthealthtest.Host{}
	exp := createMetricsExporter(t, testConfig(srv), host)

	require.NoError(t, exp.ConsumeMetrics(context.Background(), nodeMetrics("node-a", time.Now(), 3, 0)))
	require.Eventually(t, func() bool { return srv.Calls("PutLogEvents") >= 3 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError}, host.Statuses(),
		"reported once however many retries fail")
	assert.ErrorContains(t, host.Last().Err(), "CloudWatch Logs: ", "the status names what fails")

	srv.Up()
	require.Eventually(t, func() bool { return total(received(t, srv)) == 3 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}, host.Statuses())
}
