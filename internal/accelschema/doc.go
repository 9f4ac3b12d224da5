// Package accelschema is the single source of truth for the names this
// distribution emits: metric names, units, attribute keys and enum values.
//
// Receivers map vendor fields (DCGM_FI_*, NVML calls, neuron-monitor JSON,
// vLLM/SGLang/Triton/TGI/NIM families) onto these names; the processors and
// exporters only ever read these names, so nothing downstream branches on the
// vendor. docs/metrics.md is rendered from Registry (make generate) and a test
// fails when the two disagree, or when a component's metadata.yaml names a
// metric or attribute that is not registered here.
//
// Names follow OpenTelemetry semantic conventions where they exist (hw.*,
// gen_ai.*, k8s.*, host.*, cloud.*, process.*, error.type) and live under
// accelerator.* where they do not.
package accelschema
