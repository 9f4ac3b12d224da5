//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// startAMP is Amazon Managed Prometheus as near as a test gets: a real
// Prometheus with its remote-write receiver and no scrape configuration
// (every sample it holds came by remote write), behind a proxy that
// verifies each request's SigV4 signature for the service "aps" in
// us-east-1 with the static test credentials.
func startAMP(t *testing.T) (*e2etest.Prometheus, *e2etest.SigV4Proxy) {
	t.Helper()
	prom := e2etest.StartPrometheus(t, e2etest.PrometheusOptions{RemoteWriteReceiver: true})
	return prom, e2etest.StartSigV4Proxy(t, prom.RemoteWriteURL(), "us-east-1", "aps")
}

// ampEnv is the environment amp.yaml reads: the credentials the proxy
// verifies, the region, a workspace URL on the proxy, the log's directory.
func ampEnv(amp *e2etest.SigV4Proxy, queueDir string) []string {
	return append(e2etest.AWSTestEnv("us-east-1"),
		"OTELCOL_ACCEL_AMP_REMOTE_WRITE_URL="+amp.URL+"/workspaces/ws-e2e/api/v1/remote_write",
		"OTELCOL_ACCEL_QUEUE_DIR="+queueDir,
	)
}

// assertNothingRefused: every request was signed right, and nothing was
// refused on the way: Prometheus logs every sample it refuses (out of
// order, duplicate with another value, too old), and the exporter logs
// every batch it drops from its write-ahead log.
func assertNothingRefused(t *testing.T, prom *e2etest.Prometheus, amp *e2etest.SigV4Proxy, gw *e2etest.Collector) {
	t.Helper()
	if v := amp.Violations(); len(v) > 0 {
		t.Errorf("requests AMP would refuse: %v", v)
	}
	if amp.Forwarded() == 0 {
		t.Error("no remote-write request reached Prometheus")
	}
	for _, refused := range []string{"remote write", "Out of order", "out of bounds"} {
		if strings.Contains(prom.Output(), refused) {
			t.Errorf("Prometheus refused remote-written samples:\n%s", tailLines(prom.Output(), 20))
			break
		}
	}
	if strings.Contains(gw.Output(), "dropping write-ahead log batch") {
		t.Errorf("the gateway dropped batches Prometheus rejected:\n%s", tailLines(gw.Output(), 40))
	}
}

// The dashboards work on a remote-write store too: the demo fleet (accelsim,
// one agent per node) sends to a gateway running the shipped amp.yaml, as
// written (SigV4 signing, write-ahead log, one request at a time), into
// startAMP's Prometheus. Every Grafana panel query and template variable
// must find data there, as TestDashboardsShowDataFromTheDemoFleet proves
// for the scrape path.
func TestDashboardsShowDataThroughRemoteWrite(t *testing.T) {
	prom, amp := startAMP(t)
	fleet := e2etest.StartFleet(t, e2etest.FleetOptions{
		Sim:            e2etest.SimOptions{Speed: dashboardSimSpeed},
		GatewayConfigs: []string{e2etest.ConfigPath("amp.yaml")},
		GatewayEnv:     ampEnv(amp, t.TempDir()),
	})

	awaitDashboardChecks(t, grafanaChecks(t, prom), func() {}, func() { assertFleetRunning(t, fleet, prom) })

	assertNothingRefused(t, prom, amp, fleet.Gateway)
	hs, _, err := fleet.Gateway.Health()
	if err != nil {
		t.Fatal(err)
	}
	if got := hs.ComponentStatus("exporter:prometheus_remote_write/amp"); got != "StatusOK" {
		t.Errorf("the remote-write exporter reports %q, want StatusOK", got)
	}
}

// tailLines is the last n lines of a process's output.
func tailLines(out string, n int) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
