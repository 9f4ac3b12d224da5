package emfexporter

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-accel/otelcol-accel/internal/cwlogstest"
)

// statusHost records the status events components report.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []componentstatus.Status
}

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev.Status())
}

func (h *statusHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]componentstatus.Status(nil), h.events...)
}

func TestOutageIsReportedAsRecoverableAndRecoveryAsOK(t *testing.T) {
	isolateAWS(t)
	srv := cwlogstest.New("us-east-1")
	defer srv.Close()
	srv.SetDown(cwlogstest.Unavailable)
	host := &statusHost{Host: componenttest.NewNopHost()}
	exp := createMetricsExporter(t, testConfig(srv), host)

	require.NoError(t, exp.ConsumeMetrics(context.Background(), nodeMetrics("node-a", time.Now(), 3, 0)))
	require.Eventually(t, func() bool { return srv.Calls("PutLogEvents") >= 3 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError}, host.statuses(),
		"reported once however many retries fail")

	srv.Up()
	require.Eventually(t, func() bool { return total(received(t, srv)) == 3 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}, host.statuses())
}
