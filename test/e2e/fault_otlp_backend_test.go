//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The gateway as the Helm chart runs it for `destination: otlp` with the
// insights console on (gateway.yaml, otlp.yaml, insights.yaml), pointed at
// an OTLP/gRPC backend on loopback. Only the time scale differs: short
// batches and retries, so an outage and its recovery fit in seconds.
const otlpBackendFaultOverlay = `
exporters:
  otlp_grpc/backend:
    sending_queue:
      batch:
        flush_timeout: 200ms
    retry_on_failure:
      initial_interval: 200ms
      max_interval: 1s
`

func startOTLPBackendGateway(t *testing.T, backend, storage string) *e2etest.Collector {
	t.Helper()
	return e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: []string{
			e2etest.ConfigPath("gateway.yaml"),
			e2etest.ConfigPath("otlp.yaml"),
			e2etest.ConfigPath("insights.yaml"),
			e2etest.WriteConfig(t, "otlp-backend-fault.yaml", otlpBackendFaultOverlay),
		},
		Env: []string{
			"OTELCOL_ACCEL_OTLP_BACKEND_ENDPOINT=" + backend,
			"OTELCOL_ACCEL_OTLP_BACKEND_INSECURE=true",
			"OTELCOL_ACCEL_STORAGE_DIR=" + storage,
			"OTELCOL_ACCEL_INSIGHTS_ENDPOINT=" + e2etest.FreeEndpoint(t),
		},
	})
}

func sinkBodies(lds []plog.Logs) map[string]int {
	out := map[string]int{}
	for _, ld := range lds {
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			sls := rls.At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					out[lrs.At(k).Body().Str()]++
				}
			}
		}
	}
	return out
}

func sinkPoints(s *e2etest.OTLPSink) map[pointKey][]float64 {
	mds, _ := s.Metrics(0)
	return otlpPoints(mds)
}

// TestFaultOTLPBackendOutageKill: the backend is unreachable from the start;
// the gateway accepts points and logs, is killed with SIGKILL and started
// again on the same storage directory, accepts more, and only then does
// the backend come up. Everything accepted arrives exactly once: the
// queue was on disk, not in memory (the otlp destination's gateway before
// otlp.yaml reused agent-to-gateway.yaml's in-memory queue and lost it).
// The insights console beside it, in pipelines of its own, sees the same
// data and does not disturb delivery.
func TestFaultOTLPBackendOutageKill(t *testing.T) {
	t.Parallel()
	backend := e2etest.FreeEndpoint(t) // nothing listens yet: the outage
	storage := t.TempDir()
	gw := startOTLPBackendGateway(t, backend, storage)
	at := time.Now().Truncate(time.Second)
	want := map[pointKey]float64{}
	wantEvents := map[string]bool{}

	sendGauges(t, gw, 0, 20, at, want)
	sendEvents(t, gw, 0, 20, at, wantEvents)
	gw.Kill()
	if exited, _ := gw.Exited(); !exited {
		t.Fatal("the gateway survived SIGKILL")
	}

	gw2 := startOTLPBackendGateway(t, backend, storage)
	sendGauges(t, gw2, 20, 30, at, want)
	sendEvents(t, gw2, 20, 30, at, wantEvents)
	// The console on the restarted gateway answers with what reached it.
	resp, err := http.Get("http://" + gw2.Env["OTELCOL_ACCEL_INSIGHTS_ENDPOINT"] + "/api/v1/session")
	if err != nil {
		t.Fatalf("insights console: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "csrf_token") {
		t.Errorf("insights console: %d %s", resp.StatusCode, body)
	}

	sink := e2etest.StartOTLPSink(t, e2etest.SinkOptions{Keep: true, Listen: backend})
	e2etest.Await(t, 60*time.Second, "every point and log after the outage", func() (string, bool) {
		points, ok := delivered(want, sinkPoints(sink))
		events, evOK := eventsDelivered(wantEvents, sinkBodies(sink.Logs()))
		return points + ", " + events, ok && evOK
	})
	time.Sleep(time.Second) // a late duplicate would show up here
	assertExactlyOnce(t, want, sinkPoints(sink))
	assertEventsExactlyOnce(t, wantEvents, sinkBodies(sink.Logs()))
	mds, _ := sink.Metrics(0)
	t.Logf("%d data points in %d metrics requests, %d log records in %d logs requests",
		len(want), len(mds), len(wantEvents), len(sink.Logs()))
	if err := gw2.Stop(30 * time.Second); err != nil {
		t.Errorf("gateway did not stop cleanly: %v", err)
	}
}
