package e2etest

import (
	"fmt"
	"net"

	dto "github.com/prometheus/client_model/go"
)

// TelemetryURL is the collector's own metrics endpoint (service::telemetry).
func (c *Collector) TelemetryURL() string {
	return "http://" + net.JoinHostPort(c.Env[EnvTelemetryHost], c.Env[EnvTelemetryPort]) + "/metrics"
}

// Telemetry sums a counter or gauge of the collector's own metrics over
// the series whose labels include every pair in match (e.g.
// "otelcol_exporter_sent_metric_points", "exporter", "cloudwatch_emf").
// Counters are found with or without the "_total" suffix (this collector
// release exposes them without). A family that is not there yet — a
// counter appears on its first increment — sums to 0.
func (c *Collector) Telemetry(family string, match ...string) (float64, error) {
	if len(match)%2 != 0 {
		return 0, fmt.Errorf("match needs label/value pairs, got %q", match)
	}
	fams, err := ScrapePrometheus(c.TelemetryURL())
	if err != nil {
		return 0, err
	}
	f := fams[family]
	if f == nil {
		f = fams[family+"_total"]
	}
	return SumFamily(f, match...), nil
}

// SumFamily adds the values of a family's series whose labels include every
// pair in match.
func SumFamily(f *dto.MetricFamily, match ...string) float64 {
	if f == nil {
		return 0
	}
	sum := 0.0
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(match); i += 2 {
			if Label(m, match[i]) != match[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum
}
