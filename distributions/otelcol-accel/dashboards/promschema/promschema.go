// Package promschema is internal/accelschema as Prometheus sees it through
// the gateway's prometheus exporter, and a PromQL reference check against it.
//
// The exporter (contrib, default translation: suffixes on, underscores) names
// series with otlptranslator; so does this package, from the registry, so a
// dashboard panel or an alert rule can only use names the collector emits.
// The dashboards' and the alert rules' tests both check their queries here.
package promschema

import (
	"fmt"

	"github.com/prometheus/otlptranslator"

	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// BuiltinLabels are labels every series carries besides the attributes:
// Prometheus's target labels and the exporter's scope labels.
var BuiltinLabels = []string{"job", "instance", "otel_scope_name", "otel_scope_version", "otel_scope_schema_url", "__name__"}

var instruments = map[as.Instrument]otlptranslator.MetricType{
	as.Gauge:         otlptranslator.MetricTypeGauge,
	as.Counter:       otlptranslator.MetricTypeMonotonicCounter,
	as.UpDownCounter: otlptranslator.MetricTypeNonMonotonicCounter,
	as.Histogram:     otlptranslator.MetricTypeHistogram,
}

// MetricName is a registered metric's Prometheus name (histograms: the
// family name, without _bucket, _sum or _count).
func MetricName(m as.MetricDef) (string, error) {
	namer := otlptranslator.MetricNamer{WithMetricSuffixes: true}
	name, err := namer.Build(otlptranslator.Metric{Name: m.Name, Unit: m.Unit, Type: instruments[m.Instrument]})
	if err != nil {
		return "", fmt.Errorf("%s: %w", m.Name, err)
	}
	return name, nil
}

// Series maps each Prometheus series name of a registered metric
// (histograms: _bucket, _sum, _count) to the metric.
func Series() (map[string]as.MetricDef, error) {
	out := map[string]as.MetricDef{}
	for _, m := range as.Metrics {
		name, err := MetricName(m)
		if err != nil {
			return nil, err
		}
		if m.Instrument == as.Histogram {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				out[name+suffix] = m
			}
			continue
		}
		out[name] = m
	}
	return out, nil
}

// LabelName is an attribute key as a Prometheus label.
func LabelName(key string) (string, error) {
	namer := otlptranslator.LabelNamer{PreserveMultipleUnderscores: true}
	return namer.Build(key)
}

// Labels maps each label name of a registered metric or resource attribute
// (not log-only ones) to it.
func Labels() (map[string]as.AttributeDef, error) {
	out := map[string]as.AttributeDef{}
	for _, a := range as.Attributes {
		if a.Scope == as.ScopeLog {
			continue
		}
		name, err := LabelName(a.Key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.Key, err)
		}
		out[name] = a
	}
	return out, nil
}
