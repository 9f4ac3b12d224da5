// Package latencydiagnosis names the most likely cause of an inference
// endpoint's latency regression (issue 19): when its time to first token
// or inter-token latency regresses against its own baseline, explainable
// rules read the signals the agent already has — the server's KV cache and
// queue, the device's activity, throttling and errors, who else shares the
// device, recent scale-ups, zone balance — and the strongest rule whose
// evidence is present is the cause, with that evidence and the action to
// take. A rule never fires without its signals; a regression no rule
// explains is reported as undetermined, with the latencies only.
//
// It is pure: signals in, a diagnosis out. The component that gathers the
// signals per endpoint and persists baselines wires it in.
package latencydiagnosis // import "github.com/otelcol-accel/otelcol-accel/internal/latencydiagnosis"
