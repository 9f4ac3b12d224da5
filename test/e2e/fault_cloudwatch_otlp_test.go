//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/cwotlptest"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The gateway as shipped for CloudWatch's OTLP endpoints
// (cloudwatch-otlp.yaml alone, as overlays/eks-cloudwatch-otlp runs it:
// SigV4 per service, gzip, batches inside the persistent queue), pointed at
// the endpoints on loopback, which verify every request's signature with
// the static test credentials and decode its OTLP protobuf. Only the
// endpoints and the time scale differ: short batches and retries, so an
// outage and its recovery fit in seconds.
const cloudwatchOTLPFaultOverlay = `
exporters:
  otlp_http/cloudwatch_metrics:
    metrics_endpoint: ${env:E2E_CWOTLP_ENDPOINT}/v1/metrics
    sending_queue:
      batch:
        flush_timeout: 200ms
    retry_on_failure:
      initial_interval: 200ms
      max_interval: 1s
  otlp_http/cloudwatch_logs:
    logs_endpoint: ${env:E2E_CWOTLP_ENDPOINT}/v1/logs
    sending_queue:
      batch:
        flush_timeout: 200ms
    retry_on_failure:
      initial_interval: 200ms
      max_interval: 1s
`

const (
	cwotlpLogGroup  = "/otelcol-accel/e2e-events"
	cwotlpLogStream = "ip-10-0-1-17"
)

func startOTLPGateway(t *testing.T, cw *e2etest.CloudWatchOTLP, queueDir string) *e2etest.Collector {
	t.Helper()
	return e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: []string{
			e2etest.ConfigPath("cloudwatch-otlp.yaml"),
			e2etest.WriteConfig(t, "cloudwatch-otlp-fault.yaml", cloudwatchOTLPFaultOverlay),
		},
		Env: append(cw.Env(),
			"E2E_CWOTLP_ENDPOINT="+cw.URL,
			"OTELCOL_ACCEL_QUEUE_DIR="+queueDir,
			"OTELCOL_ACCEL_LOG_GROUP="+cwotlpLogGroup,
			"OTELCOL_ACCEL_LOG_STREAM="+cwotlpLogStream,
		),
	})
}

// otlpPoints reads the gauge points out of decoded OTLP requests, counting
// each time it appears.
func otlpPoints(mds []pmetric.Metrics) map[pointKey][]float64 {
	out := map[pointKey][]float64{}
	for _, md := range mds {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			device, _ := rms.At(i).Resource().Attributes().Get(accelschema.AttrHWID)
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					m := ms.At(k)
					if m.Type() != pmetric.MetricTypeGauge {
						continue
					}
					dps := m.Gauge().DataPoints()
					for d := 0; d < dps.Len(); d++ {
						dp := dps.At(d)
						key := pointKey{device.Str(), m.Name(), dp.Timestamp().AsTime().UnixMilli()}
						out[key] = append(out[key], dp.DoubleValue())
					}
				}
			}
		}
	}
	return out
}

// eventBatch is logs request number req: one health event per device of
// gaugeBatch's 4, each body distinct.
func eventBatch(req int, at time.Time, want map[string]bool) plog.Logs {
	ld := plog.NewLogs()
	for g := 0; g < 4; g++ {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr(accelschema.AttrHWID, fmt.Sprintf("GPU-fault-%03d-%d", req, g))
		rl.Resource().Attributes().PutStr(accelschema.AttrK8sNodeName, fmt.Sprintf("node-%d", g))
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(at.Add(time.Duration(req) * time.Millisecond)))
		body := fmt.Sprintf("event %03d on GPU %d", req, g)
		lr.Body().SetStr(body)
		want[body] = true
	}
	return ld
}

func sendEvents(t *testing.T, gw *e2etest.Collector, from, to int, at time.Time, want map[string]bool) {
	t.Helper()
	c, err := e2etest.DialOTLP(gw.Env[e2etest.EnvOTLPGRPC])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for req := from; req < to; req++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.SendLogs(ctx, eventBatch(req, at, want))
		cancel()
		if err != nil {
			t.Fatalf("logs request %d was not accepted: %v", req, err)
		}
	}
}

// eventBodies counts each log body in what the logs endpoint took, and
// fails the test for a request that did not name the configured group and
// stream.
func eventBodies(t *testing.T, reqs []cwotlptest.LogsRequest) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range reqs {
		if r.Group != cwotlpLogGroup || r.Stream != cwotlpLogStream {
			t.Errorf("logs sent to group %q stream %q, want %q %q", r.Group, r.Stream, cwotlpLogGroup, cwotlpLogStream)
		}
		rls := r.Logs.ResourceLogs()
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

// eventsDelivered says how many of the wanted log bodies are among got,
// and whether all are.
func eventsDelivered(want map[string]bool, got map[string]int) (string, bool) {
	n := 0
	for body := range want {
		if got[body] > 0 {
			n++
		}
	}
	return fmt.Sprintf("%d of %d log records delivered", n, len(want)), n == len(want)
}

func assertEventsExactlyOnce(t *testing.T, want map[string]bool, got map[string]int) {
	t.Helper()
	for body := range want {
		if n := got[body]; n != 1 {
			t.Errorf("log %q delivered %d times", body, n)
		}
	}
	for body := range got {
		if !want[body] {
			t.Errorf("log %q was never sent", body)
		}
	}
}

// TestFaultCloudWatchOTLPOutageKill: CloudWatch's OTLP endpoints answer 503
// for a while; in the middle of it the gateway is killed with SIGKILL,
// right after its last export was acknowledged, and started again on the
// same queue directory. Nothing is lost: every metric point and log record
// accepted before the kill and after the restart arrives once, signed for
// its endpoint's service, the logs with their group and stream.
func TestFaultCloudWatchOTLPOutageKill(t *testing.T) {
	t.Parallel()
	cw := e2etest.StartCloudWatchOTLP(t, "us-east-1")
	queue := t.TempDir()
	gw := startOTLPGateway(t, cw, queue)
	at := time.Now().Truncate(time.Second)
	want := map[pointKey]float64{}
	wantEvents := map[string]bool{}

	// Everything arrived; a request CloudWatch refused (a bad signature,
	// say) ends the wait at once, with what was wrong.
	arrived := func() (string, bool) {
		if v := cw.Violations(); len(v) > 0 {
			t.Fatalf("requests CloudWatch would refuse: %v", v)
		}
		points, ok := delivered(want, otlpPoints(cw.Metrics()))
		events, evOK := eventsDelivered(wantEvents, eventBodies(t, cw.Logs()))
		return points + ", " + events, ok && evOK
	}

	sendGauges(t, gw, 0, 10, at, want)
	sendEvents(t, gw, 0, 10, at, wantEvents)
	e2etest.Await(t, 30*time.Second, "the first points and logs to reach CloudWatch", arrived)

	cw.SetDown(http.StatusServiceUnavailable)
	down := time.Now()
	sendGauges(t, gw, 10, 30, at, want)
	sendEvents(t, gw, 10, 30, at, wantEvents)
	// Killed the moment the last export is acknowledged: what the gateway
	// accepted must already be in its persistent queue.
	gw.Kill()
	if exited, _ := gw.Exited(); !exited {
		t.Fatal("the gateway survived SIGKILL")
	}
	refusedBefore := cw.RefusedCalls()

	gw2 := startOTLPGateway(t, cw, queue)
	sendGauges(t, gw2, 30, 40, at, want)
	sendEvents(t, gw2, 30, 40, at, wantEvents)
	e2etest.Await(t, 30*time.Second, "the restarted gateway to retry", refusedAtLeast(refusedBefore+3, cw.RefusedCalls))
	time.Sleep(time.Until(down.Add(5 * time.Second)))
	cw.Up()
	t.Logf("CloudWatch was down %s; %d calls refused (%d before the kill)",
		time.Since(down).Round(100*time.Millisecond), cw.RefusedCalls(), refusedBefore)

	e2etest.Await(t, 60*time.Second, "every point and log after the outage", arrived)
	time.Sleep(time.Second) // a late duplicate would show up here
	assertExactlyOnce(t, want, otlpPoints(cw.Metrics()))
	assertEventsExactlyOnce(t, wantEvents, eventBodies(t, cw.Logs()))
	t.Logf("%d data points in %d metrics requests, %d log records in %d logs requests",
		len(want), len(cw.Metrics()), len(wantEvents), len(cw.Logs()))
	if v := cw.Violations(); len(v) > 0 {
		t.Errorf("requests CloudWatch would refuse: %v", v)
	}
	if err := gw2.Stop(30 * time.Second); err != nil {
		t.Errorf("gateway did not stop cleanly: %v", err)
	}
}
