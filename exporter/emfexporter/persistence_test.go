package emfexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
	"github.com/otelcol-accel/otelcol-accel/internal/cwlogstest"
	"github.com/otelcol-accel/otelcol-accel/internal/filestoragetest"
)

// collector is what a collector process holds for this test: a file_storage
// extension and the exporter whose sending queue lives in it.
type collector struct {
	storage component.Component
	exp     interface {
		component.Component
		ConsumeMetrics(context.Context, pmetric.Metrics) error
	}
}

func startCollector(t *testing.T, dir string, srv *cwlogstest.Server, persistent bool) collector {
	t.Helper()
	storage, storageID := filestoragetest.StartNoCleanup(t, dir)

	cfg := testConfig(srv)
	if persistent {
		cfg.QueueConfig.Get().StorageID = &storageID
	}
	require.NoError(t, cfg.Validate())
	host := &componenthealthtest.Host{Extensions: map[component.ID]component.Component{storageID: storage}}
	return collector{storage: storage, exp: createMetricsExporter(t, cfg, host)}
}

func (c collector) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, c.exp.Shutdown(context.Background()))
	require.NoError(t, c.storage.Shutdown(context.Background()))
}

// TestPersistentQueueLosesNothingAcrossOutageAndRestart: CloudWatch goes
// down, the collector accepts data and is restarted during the outage; when
// CloudWatch comes back every data point arrives, once.
func TestPersistentQueueLosesNothingAcrossOutageAndRestart(t *testing.T) {
	want, got := outageAndRestart(t, true)
	assert.Equal(t, total(want), total(got), "data points in = data points out")
	assert.Equal(t, want, got, "every point, exactly once")
}

// TestInMemoryQueueLosesDataOnRestart is the control: the same scenario
// without file_storage loses what was queued, which shows the test above
// would notice a queue that is not persistent.
func TestInMemoryQueueLosesDataOnRestart(t *testing.T) {
	want, got := outageAndRestart(t, false)
	assert.Less(t, total(got), total(want))
}

func outageAndRestart(t *testing.T, persistent bool) (want, got map[string]int) {
	isolateAWS(t)
	srv := cwlogstest.New("us-east-1", verifySignatures)
	defer srv.Close()
	dir := t.TempDir()

	first := startCollector(t, dir, srv, persistent)
	at := time.Now().Truncate(time.Second)
	var in []pmetric.Metrics
	push := func(c collector, i int) {
		node := []string{"node-a", "node-b", "node-c"}[i%3]
		md := nodeMetrics(node, at.Add(time.Duration(i)*time.Second), 40, float64(1000*i))
		in = append(in, md)
		// The exporter does not modify what it is given, so md stays what
		// was sent.
		require.NoError(t, c.exp.ConsumeMetrics(context.Background(), md))
	}
	for i := 0; i < 5; i++ {
		push(first, i)
	}
	require.Eventually(t, func() bool { return total(received(t, srv)) == 5*40 }, 10*time.Second, 10*time.Millisecond)

	srv.SetDown(cwlogstest.Unavailable)
	for i := 5; i < 30; i++ {
		push(first, i)
	}
	// Let the queue's consumers fail and back off a few times.
	require.Eventually(t, func() bool { return srv.Calls("PutLogEvents") > 5+20 }, 10*time.Second, 5*time.Millisecond)
	first.stop(t) // the restart, while CloudWatch is still down

	second := startCollector(t, dir, srv, persistent)
	for i := 30; i < 40; i++ {
		push(second, i)
	}
	time.Sleep(50 * time.Millisecond) // still down: nothing can have been delivered
	assert.Equal(t, 5*40, total(received(t, srv)))
	srv.Up()

	want = sent(in...)
	if persistent {
		require.Eventually(t, func() bool { return total(received(t, srv)) >= total(want) }, 20*time.Second, 10*time.Millisecond)
	} else {
		require.Eventually(t, func() bool { return total(received(t, srv)) >= 15*40 }, 20*time.Second, 10*time.Millisecond)
	}
	second.stop(t)
	assert.Empty(t, srv.Violations())
	return want, received(t, srv)
}
