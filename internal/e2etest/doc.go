// Package e2etest runs the built otelcol-accel binary (and the accelsim fleet
// simulator) as child processes for end-to-end tests, fault tests and load
// runs: it starts them with a config, waits for the health endpoint, reads
// what the collector exports, and stops them cleanly. When a test fails, the
// collector's own log is attached to the failure.
package e2etest
