//go:build e2e

package browser

import (
	"fmt"
	"testing"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The same pages and numbers with the Prometheus backend, against Debian's
// real Prometheus scraping the demo gateway.
func TestConsolePrometheusBackend(t *testing.T) {
	promExporter := e2etest.FreeEndpoint(t)
	prom := e2etest.StartPrometheus(t, e2etest.PrometheusOptions{Targets: []string{promExporter}})
	backend := e2etest.WriteConfig(t, "insights-prometheus.yaml", fmt.Sprintf(`
exporters:
  accelerator_insights:
    backend: prometheus
    # Rates over two scrape intervals' worth of a young fleet's data
    # (the default 5m under-reads when Prometheus holds less than that).
    rate_window: 30s
    prometheus:
      endpoint: %s
`, prom.URL))
	f := startConsoleFleet(t, []string{backend}, []string{e2etest.EnvPrometheus + "=" + promExporter})
	var s Session
	if err := f.API.Get("session", nil, &s); err != nil || s.Backend != "prometheus" {
		t.Fatalf("the console's backend is %q (%v), want prometheus", s.Backend, err)
	}
	tr := waitForFleet(t, f)
	b := StartBrowser(t, screenshotDir(t, "prometheus"))
	checkConsole(t, f, b, tr, "prometheus")
}
