//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The dashboards work on a remote-write store too: the demo fleet (accelsim,
// one agent per node) sends to a gateway running the shipped amp.yaml, as
// written (SigV4 signing, write-ahead log, one request at a time), whose
// remote-write URL is a real Prometheus with its remote-write receiver and
// no scrape configuration, so every sample it holds came by remote write.
// Every Grafana panel query and template variable must find data there, as
// TestDashboardsShowDataFromTheDemoFleet proves for the scrape path.
// Prometheus ignores the SigV4 signature; TestCloudWatchOTLP* check that
// signing against a verifier.
func TestDashboardsShowDataThroughRemoteWrite(t *testing.T) {
	prom := e2etest.StartPrometheus(t, e2etest.PrometheusOptions{RemoteWriteReceiver: true})
	aws := e2etest.AWSTestEnv("us-east-1")
	queue := t.TempDir()
	fleet := e2etest.StartFleet(t, e2etest.FleetOptions{
		Sim:            e2etest.SimOptions{Speed: dashboardSimSpeed},
		GatewayConfigs: []string{e2etest.ConfigPath("amp.yaml")},
		GatewayEnv: append(aws,
			"OTELCOL_ACCEL_AMP_REMOTE_WRITE_URL="+prom.RemoteWriteURL(),
			"OTELCOL_ACCEL_QUEUE_DIR="+queue,
		),
	})

	awaitDashboardChecks(t, grafanaChecks(t, prom), func() {}, func() { assertFleetRunning(t, fleet, prom) })

	// Nothing was refused on the way: Prometheus logs every sample it
	// refuses (out of order, duplicate with another value, too old), and
	// the exporter logs every batch it drops from its write-ahead log.
	for _, refused := range []string{"remote write", "Out of order", "out of bounds"} {
		if strings.Contains(prom.Output(), refused) {
			t.Errorf("Prometheus refused remote-written samples:\n%s", tailLines(prom.Output(), 20))
			break
		}
	}
	if strings.Contains(fleet.Gateway.Output(), "dropping write-ahead log batch") {
		t.Errorf("the gateway dropped batches Prometheus rejected:\n%s", tailLines(fleet.Gateway.Output(), 40))
	}
	hs, _, err := fleet.Gateway.Health()
	if err != nil {
		t.Fatal(err)
	}
	if got := hs.ComponentStatus("exporter:prometheusremotewrite/amp"); got != "StatusOK" {
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
