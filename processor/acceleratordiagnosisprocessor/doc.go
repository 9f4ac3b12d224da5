// Package acceleratordiagnosisprocessor implements the accelerator_diagnosis
// processor (issue 19): per inference endpoint (workload and model) it
// measures the TTFT and inter-token latency p95 of each window from the
// servers' histograms, keeps the endpoint's own baseline of both
// (internal/baseline, persisted through a storage extension), and when a
// window regresses against it, gathers the signals that could explain it —
// the servers' KV cache, preemptions and queue, the activity, throttling and
// errors of the devices their pods hold, the other consumers of a shared
// device, recent cold starts and scale-ups, zone imbalance — and lets the
// explainable rules of internal/latencydiagnosis name the most likely cause.
// The finding leaves through the logs pipeline in the shape of every other
// finding; regressions are counted by cause on the metrics side. One
// instance serves both pipelines under one component ID.
package acceleratordiagnosisprocessor // import "github.com/otelcol-accel/otelcol-accel/processor/acceleratordiagnosisprocessor"

//go:generate ../../bin/mdatagen metadata.yaml
