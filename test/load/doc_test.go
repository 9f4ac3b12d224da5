//go:build load

// Package load runs the built otelcol-accel against the accelsim simulator
// and measures what it costs: CPU-seconds per scrape, resident memory and
// data points per CPU-second, for node agents at 8, 64 and 512 GPUs, a
// gateway fed 10,000 GPUs' worth of agent output, and — in the same run,
// against the same simulated dcgm-exporter — the pipeline users run today
// (the contrib prometheus receiver, no enrichment) as the reference.
//
//	make bench                  (after make build)
//	go test -tags load -count=1 -timeout 60m -v ./test/load/...
//
// Every phase runs a fixed number of intervals and stops by itself. The
// results are printed and written to _build/load-results.md (override with
// OTELCOL_ACCEL_LOAD_RESULTS); docs/performance.md quotes them. Knobs, for
// quick local runs: OTELCOL_ACCEL_LOAD_INTERVALS (measured intervals per
// phase, default 12), OTELCOL_ACCEL_LOAD_SOAK (soak duration, default 5m,
// 0 skips it), OTELCOL_ACCEL_LOAD_SIZES (default 8,64,512; 0 skips them),
// OTELCOL_ACCEL_LOAD_GATEWAY_GPUS (default 2000,10000; 0 skips the
// gateway), OTELCOL_ACCEL_LOAD_GATEWAY_TARGETS (default emf,otlp: the
// cloudwatch_emf gateway and the otlp_http + sigv4auth one for CloudWatch's
// OTLP endpoints), OTELCOL_ACCEL_LOAD_GATEWAY_CONFIG (one more config
// layered on the gateway, for experiments), OTELCOL_ACCEL_LOAD_PROFILE (a
// file to save the gateway's CPU profile to), OTELCOL_ACCEL_LOAD_SAVE_TEMPLATE
// (a file to save the node output the gateway is fed to, as OTLP JSON),
// OTELCOL_ACCEL_LOAD_AGENT_PROFILE (a directory to save each agent's CPU
// profile over its window to, agent-<gpus>.pprof; the profiler costs CPU,
// so measure without it), OTELCOL_ACCEL_LOAD_AGENT_CONFIG (one more config
// layered on the agents, for experiments), OTELCOL_ACCEL_LOAD_AGENT_ENV
// (more environment for the agents only, space-separated KEY=value: GOGC,
// GOMEMLIMIT experiments), OTELCOL_ACCEL_LOAD_BINARY (installed, the
// default: the agents and the reference run copies of the binaries written
// as a container runtime unpacks an image; built: the linker's output
// itself, whose huge-page-mapped page cache makes all of it resident).
// The agents run the agent build
// (_build/otelcol-accel-agent, $OTELCOL_ACCEL_AGENT_BIN), the reference and
// the gateway the full one; each row names its build and binary size.
// BenchmarkAgentExport (-bench AgentExport) is the agent's export path.
package load
