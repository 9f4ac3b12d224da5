//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/cwlogstest"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
	"github.com/otelcol-accel/otelcol-accel/internal/emfvalidate"
)

// The gateway as shipped for CloudWatch (gateway.yaml + cloudwatch-emf.yaml,
// persistent sending queue in file_storage), pointed at a CloudWatch Logs
// API on loopback. Only the test's time scale differs: short batches and
// retries, so an outage and its recovery fit in seconds.
const cloudwatchFaultOverlay = `
exporters:
  cloudwatch_emf:
    endpoint: ${env:E2E_CLOUDWATCH_ENDPOINT}
    sending_queue:
      batch:
        flush_timeout: 200ms
    retry_on_failure:
      initial_interval: 200ms
      max_interval: 1s
  cloudwatch_emf/events:
    endpoint: ${env:E2E_CLOUDWATCH_ENDPOINT}
`

const emfExporter = "exporter:cloudwatch_emf"

func startEMFGateway(t *testing.T, cw *e2etest.CloudWatchLogs, queueDir string) *e2etest.Collector {
	t.Helper()
	return e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: []string{
			e2etest.ConfigPath("gateway.yaml"),
			e2etest.ConfigPath("cloudwatch-emf.yaml"),
			e2etest.WriteConfig(t, "cloudwatch-fault.yaml", cloudwatchFaultOverlay),
		},
		Env: append(cw.CloudWatchEnv(),
			"E2E_CLOUDWATCH_ENDPOINT="+cw.URL,
			"OTELCOL_ACCEL_QUEUE_DIR="+queueDir,
		),
	})
}

// pointKey names one gauge point: the device, the metric, the time (ms).
type pointKey struct {
	device, metric string
	ms             int64
}

var faultMetrics = []string{
	accelschema.MetricPower, accelschema.MetricTemperature, accelschema.MetricGPUUtilization,
	accelschema.MetricGPUMemoryUsage, accelschema.MetricSMActive,
}

// gaugeBatch is request number req of the known input: 4 GPUs on 4 nodes,
// 5 gauges each, every value distinct so a point cannot be mistaken for
// another.
func gaugeBatch(req int, at time.Time, want map[pointKey]float64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	ts := at.Add(time.Duration(req) * time.Millisecond)
	for g := 0; g < 4; g++ {
		rm := md.ResourceMetrics().AppendEmpty()
		attrs := rm.Resource().Attributes()
		device := fmt.Sprintf("GPU-fault-%03d-%d", req, g)
		attrs.PutStr(accelschema.AttrHWID, device)
		attrs.PutStr(accelschema.AttrK8sClusterName, "fault")
		attrs.PutStr(accelschema.AttrK8sNodeName, fmt.Sprintf("node-%d", g))
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		for i, name := range faultMetrics {
			m := ms.AppendEmpty()
			m.SetName(name)
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(pcommon.NewTimestampFromTime(ts))
			v := float64(req*1000 + g*10 + i)
			dp.SetDoubleValue(v)
			want[pointKey{device, name, ts.UnixMilli()}] = v
		}
	}
	return md
}

// send delivers requests [from, to) to the gateway; each must be accepted.
func sendGauges(t *testing.T, gw *e2etest.Collector, from, to int, at time.Time, want map[pointKey]float64) {
	t.Helper()
	c, err := e2etest.DialOTLP(gw.Env[e2etest.EnvOTLPGRPC])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for req := from; req < to; req++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.Send(ctx, gaugeBatch(req, at, want))
		cancel()
		if err != nil {
			t.Fatalf("request %d was not accepted: %v", req, err)
		}
	}
}

// emfPoints reads the points out of EMF events, counting each time it
// appears. A metric several directives declare is one point.
func emfPoints(t *testing.T, events []cwlogstest.Event) map[pointKey][]float64 {
	t.Helper()
	out := map[pointKey][]float64{}
	for _, e := range events {
		if !e.EMF {
			continue
		}
		doc, err := emfvalidate.Event([]byte(e.Message), 0)
		if err != nil {
			t.Fatalf("event in %s/%s: %v", e.Group, e.Stream, err)
		}
		var device string
		_ = json.Unmarshal(doc.Root[accelschema.AttrHWID], &device)
		seen := map[string]bool{}
		for _, m := range doc.Metrics {
			if seen[m.Name] {
				continue
			}
			seen[m.Name] = true
			var v float64
			if err := json.Unmarshal(m.Value, &v); err != nil {
				t.Fatalf("metric %s in an event for %s has no number: %s", m.Name, device, m.Value)
			}
			k := pointKey{device, m.Name, e.Timestamp}
			out[k] = append(out[k], v)
		}
	}
	return out
}

// delivered says how many of the wanted points are among got, and whether
// all are (an e2etest.Await check).
func delivered(want map[pointKey]float64, got map[pointKey][]float64) (string, bool) {
	n := 0
	for k := range want {
		if len(got[k]) > 0 {
			n++
		}
	}
	return fmt.Sprintf("%d of %d points delivered", n, len(want)), n == len(want)
}

// refusedAtLeast waits for n refused calls of a fake backend.
func refusedAtLeast(n int, refused func() int) func() (string, bool) {
	return func() (string, bool) {
		got := refused()
		return fmt.Sprintf("%d calls refused, want %d", got, n), got >= n
	}
}

// statusSeen waits for a component status among a health watch's polls.
func statusSeen(watch *e2etest.HealthWatch, component, status string) func() (string, bool) {
	return func() (string, bool) {
		return fmt.Sprintf("%s not yet %s in %d polls", component, status, watch.Polls()), watch.Seen(component, status)
	}
}

// componentStatus waits for a component's status in the health endpoint.
func componentStatus(col *e2etest.Collector, component, status string) func() (string, bool) {
	return func() (string, bool) {
		hs, _, err := col.Health()
		if err != nil {
			return err.Error(), false
		}
		got := hs.ComponentStatus(component)
		return component + " is " + got, got == status
	}
}

// assertExactlyOnce compares what CloudWatch stored with what was sent.
func assertExactlyOnce(t *testing.T, want map[pointKey]float64, got map[pointKey][]float64) {
	t.Helper()
	n := 0
	for _, vs := range got {
		n += len(vs)
	}
	if n != len(want) {
		t.Errorf("data points in = %d, data points out = %d", len(want), n)
	}
	missing, dup, wrong := 0, 0, 0
	for k, v := range want {
		vs := got[k]
		switch {
		case len(vs) == 0:
			if missing++; missing <= 5 {
				t.Errorf("lost: %s %s at %d", k.device, k.metric, k.ms)
			}
		case len(vs) > 1:
			if dup++; dup <= 5 {
				t.Errorf("delivered %d times: %s %s at %d", len(vs), k.device, k.metric, k.ms)
			}
		case vs[0] != v:
			if wrong++; wrong <= 5 {
				t.Errorf("%s %s at %d: got %v, sent %v", k.device, k.metric, k.ms, vs[0], v)
			}
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("never sent: %s %s at %d", k.device, k.metric, k.ms)
		}
	}
	if missing+dup+wrong > 0 {
		t.Errorf("%d lost, %d duplicated, %d changed of %d points", missing, dup, wrong, len(want))
	}
}

// TestFaultCloudWatchOutage: CloudWatch Logs answers 503 for a while and
// comes back. The gateway stays healthy (the exporter says it is failing,
// and then that it recovered), keeps accepting data, and once CloudWatch
// is back every point accepted before and during the outage arrives, once.
func TestFaultCloudWatchOutage(t *testing.T) {
	t.Parallel()
	cw := e2etest.StartCloudWatchLogs(t, "us-east-1")
	gw := startEMFGateway(t, cw, t.TempDir())
	watch := e2etest.WatchHealth(gw, 250*time.Millisecond, emfExporter)
	defer watch.Stop()
	at := time.Now().Truncate(time.Second)
	want := map[pointKey]float64{}

	sendGauges(t, gw, 0, 10, at, want)
	e2etest.Await(t, 30*time.Second, "the first points to reach CloudWatch", func() (string, bool) {
		return delivered(want, emfPoints(t, cw.AllEvents()))
	})

	cw.SetDown(cwlogstest.Unavailable)
	down := time.Now()
	during := map[pointKey]float64{}
	sendGauges(t, gw, 10, 30, at, during)
	e2etest.Await(t, 30*time.Second, "the exporter to try the outage's points", func() (string, bool) {
		return delivered(during, emfPoints(t, cw.Refused()))
	})
	// Several retries fail while CloudWatch stays down.
	refusedAt := cw.RefusedCalls()
	e2etest.Await(t, 30*time.Second, "retries during the outage", refusedAtLeast(refusedAt+3, cw.RefusedCalls))
	e2etest.Await(t, 10*time.Second, "the exporter to report the outage", statusSeen(watch, emfExporter, "StatusRecoverableError"))
	time.Sleep(time.Until(down.Add(5 * time.Second)))
	cw.Up()
	t.Logf("CloudWatch was down %s; %d calls refused", time.Since(down).Round(100*time.Millisecond), cw.RefusedCalls())
	for k, v := range during {
		want[k] = v
	}

	e2etest.Await(t, 60*time.Second, "every point after the outage", func() (string, bool) {
		return delivered(want, emfPoints(t, cw.AllEvents()))
	})
	e2etest.Await(t, 10*time.Second, "the exporter to report it recovered", componentStatus(gw, emfExporter, "StatusOK"))
	time.Sleep(time.Second) // a late duplicate would show up here
	assertExactlyOnce(t, want, emfPoints(t, cw.AllEvents()))
	if bad := watch.Stop(); len(bad) > 0 {
		t.Errorf("the gateway was unhealthy %d of %d polls during the outage: %v", len(bad), watch.Polls(), bad)
	}
	if v := cw.Violations(); len(v) > 0 {
		t.Errorf("requests CloudWatch would refuse: %v", v)
	}
	if err := gw.Stop(30 * time.Second); err != nil {
		t.Errorf("gateway did not stop cleanly: %v", err)
	}
}

// TestFaultCloudWatchOutageKill: the same outage, but the gateway is
// killed with SIGKILL in the middle of it, right after its last export was
// acknowledged, and started again on the same queue directory. Nothing is lost: points accepted before the kill, and
// after the restart, all arrive once CloudWatch is back.
func TestFaultCloudWatchOutageKill(t *testing.T) {
	t.Parallel()
	cw := e2etest.StartCloudWatchLogs(t, "us-east-1")
	queue := t.TempDir()
	gw := startEMFGateway(t, cw, queue)
	at := time.Now().Truncate(time.Second)
	want := map[pointKey]float64{}

	sendGauges(t, gw, 0, 10, at, want)
	e2etest.Await(t, 30*time.Second, "the first points to reach CloudWatch", func() (string, bool) {
		return delivered(want, emfPoints(t, cw.AllEvents()))
	})

	cw.SetDown(cwlogstest.Unavailable)
	down := time.Now()
	sendGauges(t, gw, 10, 30, at, want)
	// Killed the moment the last export is acknowledged: the shipped
	// config batches inside the persistent queue, so what the gateway
	// accepted is already on disk (a batch processor in front of the queue
	// would hold up to its timeout's worth in memory, and lose it here).
	gw.Kill()
	if exited, _ := gw.Exited(); !exited {
		t.Fatal("the gateway survived SIGKILL")
	}

	gw2 := startEMFGateway(t, cw, queue)
	watch := e2etest.WatchHealth(gw2, 250*time.Millisecond, emfExporter)
	defer watch.Stop()
	sendGauges(t, gw2, 30, 40, at, want)
	e2etest.Await(t, 30*time.Second, "the restarted gateway to retry", statusSeen(watch, emfExporter, "StatusRecoverableError"))
	time.Sleep(time.Until(down.Add(5 * time.Second)))
	cw.Up()
	t.Logf("CloudWatch was down %s; %d calls refused", time.Since(down).Round(100*time.Millisecond), cw.RefusedCalls())

	e2etest.Await(t, 60*time.Second, "every point after the outage", func() (string, bool) {
		return delivered(want, emfPoints(t, cw.AllEvents()))
	})
	time.Sleep(time.Second)
	assertExactlyOnce(t, want, emfPoints(t, cw.AllEvents()))
	if bad := watch.Stop(); len(bad) > 0 {
		t.Errorf("the restarted gateway was unhealthy %d of %d polls: %v", len(bad), watch.Polls(), bad)
	}
	if v := cw.Violations(); len(v) > 0 {
		t.Errorf("requests CloudWatch would refuse: %v", v)
	}
	if err := gw2.Stop(30 * time.Second); err != nil {
		t.Errorf("gateway did not stop cleanly: %v", err)
	}
}
