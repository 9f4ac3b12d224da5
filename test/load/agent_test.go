//go:build load

package load

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// pipelineResult is what one collector cost over a measurement window.
type pipelineResult struct {
	Name           string  `json:"name"`
	Build          string  `json:"build"`
	BinaryMiB      float64 `json:"binary_mib"`
	Intervals      int     `json:"intervals"`
	IntervalS      float64 `json:"interval_s"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	CPUPerScrape   float64 `json:"cpu_seconds_per_scrape"`
	CorePercent    float64 `json:"percent_of_one_core"`
	Points         int64   `json:"points"`
	PointsPerScr   float64 `json:"points_per_scrape"`
	PointsPerCoreS float64 `json:"points_per_cpu_second"`
	RSSMedianMiB   float64 `json:"rss_median_mib"`
	AnonMedianMiB  float64 `json:"rss_anon_median_mib"`
	FileMedianMiB  float64 `json:"rss_file_median_mib"`
	RSSMaxMiB      float64 `json:"rss_max_mib"`
	PeakRSSMiB     float64 `json:"vmhwm_mib"`
}

func resultOf(name string, w *usageWindow, points int64, intervals int, interval time.Duration) pipelineResult {
	cpu := w.cpuSeconds()
	r := pipelineResult{
		Name:          name,
		Intervals:     intervals,
		IntervalS:     interval.Seconds(),
		CPUSeconds:    cpu,
		CPUPerScrape:  cpu / float64(intervals),
		CorePercent:   100 * cpu / w.t1.Sub(w.t0).Seconds(),
		Points:        points,
		PointsPerScr:  float64(points) / float64(intervals),
		RSSMedianMiB:  float64(w.medianRSS()) / mib,
		AnonMedianMiB: float64(median(w.anon)) / mib,
		FileMedianMiB: float64(median(w.file)) / mib,
		RSSMaxMiB:     float64(w.maxRSS()) / mib,
		PeakRSSMiB:    float64(w.end.PeakRSSBytes) / mib,
	}
	if cpu > 0 {
		r.PointsPerCoreS = float64(points) / cpu
	}
	return r
}

// executable is what the agents and the reference run: by default a copy
// installed as a container runtime unpacks an image (e2etest.InstallBinary:
// the file pages a node's collector maps); OTELCOL_ACCEL_LOAD_BINARY=built
// runs the linker's output itself, whose page cache the kernel maps in
// huge pages, all of it resident.
func executable(t testing.TB, build e2etest.Build) string {
	if executableMode() == "built" {
		return "" // the build's own binary
	}
	return e2etest.InstallBinary(t, build)
}

// executableMode is OTELCOL_ACCEL_LOAD_BINARY (loadSettings refuses
// other values).
func executableMode() string {
	if os.Getenv("OTELCOL_ACCEL_LOAD_BINARY") == "built" {
		return "built"
	}
	return "installed"
}

// binaryMiB is the size of build's executable: the file pages a collector
// touches at start count in its VmRSS.
func binaryMiB(t testing.TB, build e2etest.Build) float64 {
	info, err := os.Stat(e2etest.BinaryOf(t, build))
	if err != nil {
		t.Fatal(err)
	}
	return float64(info.Size()) / mib
}

// agentRun is one node size: the agent and the reference pipeline, side by
// side against the same simulated node.
type agentRun struct {
	GPUs      int            `json:"gpus"`
	Agent     pipelineResult `json:"agent"`
	Reference pipelineResult `json:"reference"`
	LoadAvg   [2]float64     `json:"load_average_1m"`
	// windowStart is when the measured intervals began.
	windowStart time.Time
}

// measured is one collector being measured: the process and the points it
// exported, by timestamp.
type measured struct {
	col    *e2etest.Collector
	clock  *pointClock
	sink   *e2etest.OTLPSink
	window *usageWindow
}

func newSink(t testing.TB, capture func(pmetric.Metrics)) (*e2etest.OTLPSink, *pointClock) {
	clock := newPointClock()
	sink := e2etest.StartOTLPSink(t, e2etest.SinkOptions{OnMetrics: func(md pmetric.Metrics) {
		clock.observe(md)
		if capture != nil {
			capture(md)
		}
	}})
	return sink, clock
}

// startAgent runs the shipped agent configuration (agent.yaml +
// agent-to-gateway.yaml) for a simulated node on the agent build, exporting
// to a sink that stands in for the gateway.
func startAgent(t testing.TB, sim *e2etest.Sim, nodeName string, interval time.Duration, capture func(pmetric.Metrics), extra ...string) *measured {
	t.Helper()
	node := sim.Node(t, nodeName)
	sink, clock := newSink(t, capture)
	configs := append([]string{e2etest.ConfigPath("agent.yaml"), e2etest.ConfigPath("agent-to-gateway.yaml")}, extra...)
	env := []string{
		"K8S_NODE_NAME=" + node.Name,
		"OTELCOL_ACCEL_GATEWAY_ENDPOINT=" + sink.Endpoint,
		"OTELCOL_ACCEL_INTERVAL=" + interval.String(),
	}
	// OTELCOL_ACCEL_LOAD_AGENT_ENV="GOGC=200 GOMEMLIMIT=100MiB": more of the
	// agent's environment, for experiments with the Go runtime's settings
	// (the reference keeps its own).
	env = append(env, strings.Fields(os.Getenv("OTELCOL_ACCEL_LOAD_AGENT_ENV"))...)
	col := e2etest.StartCollector(t, e2etest.CollectorOptions{
		Build:   e2etest.BuildAgent,
		Binary:  executable(t, e2etest.BuildAgent),
		Configs: append(configs, e2etest.NodeOverlay(t, sim.Endpoints, node)),
		Env:     env,
	})
	return &measured{col: col, clock: clock, sink: sink}
}

// startReference runs the contrib prometheus receiver against the node's
// dcgm-exporter, on the full build (the agent build has no prometheus
// receiver).
func startReference(t testing.TB, sim *e2etest.Sim, nodeName string, interval time.Duration) *measured {
	t.Helper()
	node := sim.Node(t, nodeName)
	u, err := url.Parse(node.DCGMExporterURL)
	if err != nil {
		t.Fatal(err)
	}
	sink, clock := newSink(t, nil)
	col := e2etest.StartCollector(t, e2etest.CollectorOptions{
		Build:   e2etest.BuildFull,
		Binary:  executable(t, e2etest.BuildFull),
		Configs: []string{filepath.Join("testdata", "reference.yaml")},
		Env: []string{
			"OTELCOL_ACCEL_GATEWAY_ENDPOINT=" + sink.Endpoint,
			"OTELCOL_ACCEL_INTERVAL=" + interval.String(),
			"LOAD_DCGM_TARGET=" + u.Host,
			"LOAD_DCGM_PATH=" + u.Path,
		},
	})
	return &measured{col: col, clock: clock, sink: sink}
}

// waitFlowing waits until the sink has received data, then warmup more.
func waitFlowing(ctx context.Context, t testing.TB, warmup time.Duration, ms ...*measured) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for _, m := range ms {
		for m.sink.Points() == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s exported nothing within 2 minutes\n%s", m.col.Name, m.col.Output())
			}
			sleepUntil(ctx, t, time.Now().Add(200*time.Millisecond))
		}
	}
	sleepUntil(ctx, t, time.Now().Add(warmup))
}

// measureSideBySide measures every collector over the same window of
// intervals, starting on a whole second so the point clock's buckets line
// up, and waits for the points stamped inside it to arrive.
func measureSideBySide(ctx context.Context, t testing.TB, intervals int, interval time.Duration, names []string, ms ...*measured) []pipelineResult {
	t.Helper()
	t0 := time.Now().Truncate(time.Second).Add(time.Second)
	sleepUntil(ctx, t, t0)
	for _, m := range ms {
		m.window = startWindow(t, m.col.PID())
	}
	t1 := t0.Add(time.Duration(intervals) * interval)
	sleepUntil(ctx, t, t1)
	for _, m := range ms {
		m.window.finish(t)
	}
	// Points stamped before t1 may still sit in a batch (timeout 5s) or the
	// exporter's queue.
	sleepUntil(ctx, t, time.Now().Add(8*time.Second))
	var out []pipelineResult
	for i, m := range ms {
		if exited, err := m.col.Exited(); exited {
			t.Fatalf("%s exited during the run: %v\n%s", m.col.Name, err, m.col.Output())
		}
		r := resultOf(names[i], m.window, m.clock.between(t0, t1), intervals, interval)
		r.Build, r.BinaryMiB = string(m.col.Build), binaryMiB(t, m.col.Build)
		out = append(out, r)
	}
	return out
}

func runAgentSize(ctx context.Context, t *testing.T, gpus, intervals int, interval time.Duration, capture func(pmetric.Metrics)) agentRun {
	sim := e2etest.StartAccelsim(t, e2etest.SimOptions{
		Scenario: filepath.Join(e2etest.RepoRoot(), "test", "load", "testdata", fmt.Sprintf("node-%d.yaml", gpus)),
		Speed:    1,
	})
	node := fmt.Sprintf("load-%d", gpus)
	// OTELCOL_ACCEL_LOAD_AGENT_CONFIG layers one more config on the agent,
	// for experiments (a row measured with it is not the shipped agent).
	var extra []string
	if c := os.Getenv("OTELCOL_ACCEL_LOAD_AGENT_CONFIG"); c != "" {
		extra = append(extra, c)
	}
	agent := startAgent(t, sim, node, interval, capture, extra...)
	ref := startReference(t, sim, node, interval)
	waitFlowing(ctx, t, 2*interval, agent, ref)
	// OTELCOL_ACCEL_LOAD_AGENT_PROFILE=dir: the agent's CPU profile over the
	// window, to dir/agent-<gpus>.pprof (agent.yaml serves pprof). The
	// profiler costs CPU: measure without it.
	if dir := os.Getenv("OTELCOL_ACCEL_LOAD_AGENT_PROFILE"); dir != "" {
		path := filepath.Join(dir, fmt.Sprintf("agent-%d.pprof", gpus))
		go cpuProfile(t, "http://"+agent.col.Env[e2etest.EnvPprof], time.Duration(intervals)*interval, path)
	}
	var run agentRun
	run.GPUs = gpus
	run.LoadAvg[0], _ = e2etest.MachineLoad()
	res := measureSideBySide(ctx, t, intervals, interval, []string{"otelcol-accel agent", "prometheus receiver (reference)"}, agent, ref)
	run.LoadAvg[1], _ = e2etest.MachineLoad()
	run.Agent, run.Reference = res[0], res[1]
	run.windowStart = agent.window.t0
	for _, m := range []*measured{agent, ref} {
		if err := m.col.Stop(30 * time.Second); err != nil {
			t.Errorf("%s did not stop cleanly: %v", m.col.Name, err)
		}
	}
	if err := sim.Stop(30 * time.Second); err != nil {
		t.Errorf("accelsim did not stop cleanly: %v", err)
	}
	return run
}
