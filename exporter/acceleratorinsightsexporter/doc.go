// Package acceleratorinsightsexporter is the accelerator_insights exporter:
// it builds a live model of the accelerator fleet from the metrics and logs
// that reach the gateway (devices, partitions, holders, health events, cost,
// waste, findings, inference servers) and serves the insights console and
// the JSON API behind it (docs/insights.md).
//
//go:generate mdatagen metadata.yaml
package acceleratorinsightsexporter // import "github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter"
