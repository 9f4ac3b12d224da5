//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The gateway as shipped for Amazon Managed Prometheus (amp.yaml alone),
// writing into startAMP's Prometheus behind SigV4. Only the time scale
// differs: the write-ahead log is read every second and retries are short,
// so an outage and its recovery fit in seconds.
const ampFaultOverlay = `
exporters:
  prometheus_remote_write/amp:
    wal:
      truncate_frequency: 1s
    retry_on_failure:
      initial_interval: 200ms
      max_interval: 1s
`

func startAMPGateway(t *testing.T, amp *e2etest.SigV4Proxy, queueDir string) *e2etest.Collector {
	t.Helper()
	return e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: []string{
			e2etest.ConfigPath("amp.yaml"),
			e2etest.WriteConfig(t, "amp-fault.yaml", ampFaultOverlay),
		},
		Env: ampEnv(amp, queueDir),
	})
}

// promPoints reads back from Prometheus every sample of gaugeBatch's
// gauges (cluster "fault"), under the names remote write gives them
// (dots to underscores: the gauges carry no unit, so no suffix).
func promPoints(t *testing.T, prom *e2etest.Prometheus) map[pointKey][]float64 {
	t.Helper()
	names := map[string]string{}
	for _, m := range faultMetrics {
		names[strings.ReplaceAll(m, ".", "_")] = m
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	series, err := prom.QuerySamples(ctx, `{k8s_cluster_name="fault", __name__!="target_info"}[1h]`)
	if err != nil {
		t.Fatalf("reading the points back: %v", err)
	}
	out := map[pointKey][]float64{}
	for _, s := range series {
		metric, ok := names[s.Labels["__name__"]]
		if !ok {
			t.Fatalf("a series that was never sent: %v", s.Labels)
		}
		for _, smp := range s.Samples {
			k := pointKey{s.Labels["hw_id"], metric, smp.Ms}
			out[k] = append(out[k], smp.Value)
		}
	}
	return out
}

// TestFaultRemoteWriteOutageKill: AMP answers 503 for a while; in the
// middle of it the gateway is killed with SIGKILL, right after its last
// export was acknowledged, and started again on the same write-ahead log.
// Nothing is lost: every point accepted before the kill and after the
// restart is stored, once, with its value and time. (A store keeps one
// sample per series and time, so a resend of a sample it had would not
// show; that it is there once with the value sent is what it can prove.)
func TestFaultRemoteWriteOutageKill(t *testing.T) {
	t.Parallel()
	prom, amp := startAMP(t)
	queue := t.TempDir()
	gw := startAMPGateway(t, amp, queue)
	at := time.Now().Truncate(time.Second)
	want := map[pointKey]float64{}

	// Everything arrived; a request AMP refused for its signature ends the
	// wait at once, with what was wrong.
	arrived := func() (string, bool) {
		if v := amp.Violations(); len(v) > 0 {
			t.Fatalf("requests AMP would refuse: %v", v)
		}
		return delivered(want, promPoints(t, prom))
	}

	sendGauges(t, gw, 0, 10, at, want)
	e2etest.Await(t, 30*time.Second, "the first points to reach Prometheus", arrived)

	amp.SetDown(http.StatusServiceUnavailable)
	down := time.Now()
	sendGauges(t, gw, 10, 30, at, want)
	// Killed the moment the last export is acknowledged: amp.yaml writes
	// each request to the log before the receiver answers, so what the
	// gateway accepted is already on disk.
	gw.Kill()
	if exited, _ := gw.Exited(); !exited {
		t.Fatal("the gateway survived SIGKILL")
	}
	refusedBefore := amp.Refused()

	gw2 := startAMPGateway(t, amp, queue)
	sendGauges(t, gw2, 30, 40, at, want)
	e2etest.Await(t, 30*time.Second, "the restarted gateway to retry", refusedAtLeast(refusedBefore+3, amp.Refused))
	time.Sleep(time.Until(down.Add(5 * time.Second)))
	amp.Up()
	t.Logf("AMP was down %s; %d requests refused (%d before the kill)",
		time.Since(down).Round(100*time.Millisecond), amp.Refused(), refusedBefore)

	e2etest.Await(t, 60*time.Second, "every point after the outage", arrived)
	time.Sleep(time.Second)
	assertExactlyOnce(t, want, promPoints(t, prom))
	t.Logf("%d data points in %d remote-write requests", len(want), amp.Forwarded())
	assertNothingRefused(t, prom, amp, gw2)
	if err := gw2.Stop(30 * time.Second); err != nil {
		t.Errorf("gateway did not stop cleanly: %v", err)
	}
}
