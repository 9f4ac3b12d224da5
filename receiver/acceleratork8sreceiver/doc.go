//go:generate mdatagen metadata.yaml

// Package acceleratork8sreceiver reports what the Kubernetes API says about
// accelerator workloads: each pod's cold start, phase by phase, and the
// pods the scheduler cannot place for want of accelerators.
package acceleratork8sreceiver // import "github.com/otelcol-accel/otelcol-accel/receiver/acceleratork8sreceiver"
