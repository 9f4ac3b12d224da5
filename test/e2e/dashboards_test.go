//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/distributions/otelcol-accel/dashboards"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// The shipped dashboards must show data for what the collector really
// exports: the demo fleet (accelsim, one agent per node, the gateway) runs
// with a real Prometheus scraping the gateway, and every query of every
// Grafana panel, and every template variable, must return data with finite
// values; every metric search of the CloudWatch dashboard must match a
// metric and dimension set the gateway's EMF output declares.

const (
	// Simulated seconds per wall second: the demo's failures (row remap at
	// 10, XID 48 at 20, Neuron ECC at 25, XID 79 at 30 simulated minutes)
	// all happen in the first 30 s, so panels that only show broken or
	// unavailable devices get data too.
	dashboardSimSpeed = 60
	// How long every query gets to return data. Rates need a window of
	// scrapes; findings need a minute of history (demo-agent.yaml).
	dashboardDeadline = 4 * time.Minute
	dashboardPoll     = 5 * time.Second
)

// Grafana's built-in variables as a dashboard opened on its default range
// (6h) would send them. The rate window is what Grafana's $__rate_interval
// gives for a 1 s scrape interval on a wide panel; it holds several updates
// of the gateway (agents collect every 2 s, the gateway batches for 5 s).
var grafanaBuiltins = map[string]string{
	"__rate_interval": "30s",
	"__interval":      "15s",
	"__interval_ms":   "15000",
	"__range":         "6h",
	"__range_s":       "21600",
	"__range_ms":      "21600000",
}

// A dashboardCheck is one query of one panel (or variable, or CloudWatch
// widget) that must find data.
type dashboardCheck struct {
	name string
	run  func(context.Context) error
}

func TestDashboardsShowDataFromTheDemoFleet(t *testing.T) {
	fleet := e2etest.StartFleet(t, e2etest.FleetOptions{Sim: e2etest.SimOptions{Speed: dashboardSimSpeed}})
	prom := e2etest.StartPrometheus(t, e2etest.PrometheusOptions{
		Targets:        []string{fleet.Gateway.Env[e2etest.EnvPrometheus]},
		ScrapeInterval: time.Second,
	})
	emf := e2etest.NewEMFIndex(filepath.Join(fleet.OutDir, "emf.jsonl"))

	checks := grafanaChecks(t, prom)
	checks = append(checks, cloudWatchChecks(t, emf)...)

	awaitDashboardChecks(t, checks, func() {
		if err := emf.Update(); err != nil {
			t.Fatalf("the gateway's EMF output: %v", err)
		}
	}, func() { assertFleetRunning(t, fleet, prom) })
	t.Logf("%d EMF events read", emf.Lines())
}

// awaitDashboardChecks runs every check each round until all have found
// data or dashboardDeadline passes, and fails the test with each check
// still without data and its last error. before runs at the start of every
// round; between runs while checks are pending, before the pause.
func awaitDashboardChecks(t *testing.T, checks []dashboardCheck, before, between func()) {
	t.Helper()
	start := time.Now()
	lastErr := map[string]error{}
	pending := checks
	for round := 1; len(pending) > 0; round++ {
		before()
		var still []dashboardCheck
		for _, c := range pending {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := c.run(ctx)
			cancel()
			if err != nil {
				lastErr[c.name] = err
				still = append(still, c)
				continue
			}
			t.Logf("%5.1fs  %s", time.Since(start).Seconds(), c.name)
		}
		pending = still
		if len(pending) == 0 || time.Since(start) > dashboardDeadline {
			break
		}
		between()
		time.Sleep(dashboardPoll)
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].name < pending[j].name })
	for _, c := range pending {
		t.Errorf("%s: no data after %s: %v", c.name, dashboardDeadline, lastErr[c.name])
	}
	if len(pending) == 0 {
		t.Logf("all %d dashboard queries found data within %.0fs", len(checks), time.Since(start).Seconds())
	}
}

// assertFleetRunning stops the wait early when a process died: the queries
// would never find data.
func assertFleetRunning(t *testing.T, fleet *e2etest.Fleet, prom *e2etest.Prometheus) {
	t.Helper()
	procs := map[string]*e2etest.Process{"accelsim": fleet.Sim.Process, "gateway": fleet.Gateway.Process, "prometheus": prom.Process}
	for node, a := range fleet.Agents {
		procs["agent "+node] = a.Process
	}
	for name, p := range procs {
		if exited, err := p.Exited(); exited {
			t.Fatalf("%s exited (%v) while waiting for dashboard data", name, err)
		}
	}
}

func grafanaChecks(t *testing.T, prom *e2etest.Prometheus) []dashboardCheck {
	t.Helper()
	var checks []dashboardCheck
	for _, file := range dashboards.Grafana {
		d, err := dashboards.LoadGrafana(file)
		if err != nil {
			t.Fatal(err)
		}
		values := d.AllSelected(grafanaBuiltins)
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			selector, label, err := dashboards.ParseLabelValues(v.VariableQuery())
			if err != nil {
				t.Fatalf("%s variable %s: %v", file, v.Name, err)
			}
			match, err := dashboards.Interpolate(selector, values)
			if err != nil {
				t.Fatalf("%s variable %s: %v", file, v.Name, err)
			}
			checks = append(checks, dashboardCheck{
				name: fmt.Sprintf("%s variable $%s", file, v.Name),
				run: func(ctx context.Context) error {
					got, err := prom.LabelValues(ctx, label, match)
					if err != nil {
						return err
					}
					if len(got) == 0 {
						return fmt.Errorf("label_values(%s, %s) is empty", match, label)
					}
					return nil
				},
			})
		}
		for _, p := range d.AllPanels() {
			for _, tg := range p.Targets {
				expr, err := dashboards.Interpolate(tg.Expr, values)
				if err != nil {
					t.Fatalf("%s panel %q: %v", file, p.Title, err)
				}
				checks = append(checks, dashboardCheck{
					name: fmt.Sprintf("%s panel %q query %s", file, p.Title, tg.RefID),
					run:  func(ctx context.Context) error { return queryHasData(ctx, prom, expr) },
				})
			}
		}
	}
	if len(checks) < 60 {
		t.Fatalf("only %d Grafana queries: are the dashboards embedded?", len(checks))
	}
	return checks
}

// queryHasData runs expr and wants at least one series, every value finite.
func queryHasData(ctx context.Context, prom *e2etest.Prometheus, expr string) error {
	samples, err := prom.Query(ctx, expr)
	var perr *e2etest.PromQLError
	if errors.As(err, &perr) {
		return fmt.Errorf("Prometheus rejected %s: %w", expr, err)
	}
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return fmt.Errorf("empty result for %s", expr)
	}
	for _, s := range samples {
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			return fmt.Errorf("value %v for %v in %s", s.Value, s.Labels, expr)
		}
	}
	return nil
}

func cloudWatchChecks(t *testing.T, emf *e2etest.EMFIndex) []dashboardCheck {
	t.Helper()
	d, err := dashboards.LoadCloudWatch()
	if err != nil {
		t.Fatal(err)
	}
	var checks []dashboardCheck
	for _, w := range d.Widgets {
		searches, err := w.Searches()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range searches {
			checks = append(checks, dashboardCheck{
				name: fmt.Sprintf("%s widget %q %s", dashboards.CloudWatch, w.Properties.Title, s.ID),
				run: func(context.Context) error {
					if emf.Has(s.Namespace, s.MetricName, s.Dimensions) {
						return nil
					}
					return fmt.Errorf("the gateway's EMF output has no %s in %s with dimensions [%s]; it has %s",
						s.MetricName, s.Namespace, strings.Join(s.Dimensions, ","), strings.Join(emf.Sets(s.Namespace, s.MetricName), " "))
				},
			})
		}
	}
	return checks
}
