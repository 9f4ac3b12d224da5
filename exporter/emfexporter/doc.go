// Package emfexporter ships metrics as CloudWatch Embedded Metric Format log
// events and logs as structured JSON log events.
package emfexporter // import "github.com/otelcol-accel/otelcol-accel/exporter/emfexporter"
