package dashboards

import (
	"testing"

	"github.com/prometheus/otlptranslator"

	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// The gateway's prometheus exporter (contrib, default translation: suffixes
// on, underscores) names series with otlptranslator; so do these checks, from
// the registry, so a dashboard can only use names the collector emits.

// promSeries maps each Prometheus series name of a registered metric
// (histograms: _bucket, _sum, _count) to the metric.
func promSeries(t *testing.T) map[string]as.MetricDef {
	t.Helper()
	namer := otlptranslator.MetricNamer{WithMetricSuffixes: true}
	out := map[string]as.MetricDef{}
	for _, m := range as.Metrics {
		typ := map[as.Instrument]otlptranslator.MetricType{
			as.Gauge:         otlptranslator.MetricTypeGauge,
			as.Counter:       otlptranslator.MetricTypeMonotonicCounter,
			as.UpDownCounter: otlptranslator.MetricTypeNonMonotonicCounter,
			as.Histogram:     otlptranslator.MetricTypeHistogram,
		}[m.Instrument]
		name, err := namer.Build(otlptranslator.Metric{Name: m.Name, Unit: m.Unit, Type: typ})
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if m.Instrument == as.Histogram {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				out[name+suffix] = m
			}
			continue
		}
		out[name] = m
	}
	return out
}

// Labels every series carries besides the attributes: Prometheus's target
// labels and the exporter's scope labels.
var builtinLabels = []string{"job", "instance", "otel_scope_name", "otel_scope_version", "otel_scope_schema_url", "__name__"}

// promLabels maps each label name of a registered attribute to it.
func promLabels(t *testing.T) map[string]as.AttributeDef {
	t.Helper()
	namer := otlptranslator.LabelNamer{PreserveMultipleUnderscores: true}
	out := map[string]as.AttributeDef{}
	for _, a := range as.Attributes {
		if a.Scope == as.ScopeLog {
			continue
		}
		name, err := namer.Build(a.Key)
		if err != nil {
			t.Fatalf("%s: %v", a.Key, err)
		}
		out[name] = a
	}
	return out
}

func TestPromNamesMatchTheExporter(t *testing.T) {
	// Names seen on the demo gateway's /metrics: the translation above must
	// agree with the exporter's, unit suffixes and all.
	series := promSeries(t)
	for _, want := range []string{
		"hw_gpu_utilization_ratio", "hw_status", "hw_errors_total", "hw_power_watts", "hw_temperature_celsius",
		"hw_gpu_memory_usage_bytes", "hw_energy_joules_total", "accelerator_price_USD_per_hour",
		"accelerator_cost_USD_total", "accelerator_waste_USD_total", "accelerator_findings_total",
		"gen_ai_server_time_to_first_token_seconds_bucket", "gen_ai_server_requests_running",
		"gen_ai_server_requests_total", "gen_ai_server_tokens_total", "gen_ai_server_kv_cache_utilization_ratio",
		"accelerator_link_throughput_bytes_per_second", "accelerator_clock_frequency_hertz",
	} {
		if _, ok := series[want]; !ok {
			t.Errorf("%s is not among the translated names", want)
		}
	}
	labels := promLabels(t)
	for _, want := range []string{"hw_id", "k8s_node_name", "accelerator_team", "accelerator_waste_reason", "gen_ai_request_model"} {
		if _, ok := labels[want]; !ok {
			t.Errorf("label %s is not among the translated attribute keys", want)
		}
	}
}
