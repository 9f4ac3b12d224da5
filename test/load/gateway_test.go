//go:build load

package load

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/cwlogstest"
	"github.com/otelcol-accel/otelcol-accel/internal/cwotlptest"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// gatewayTarget is where the gateway under test sends: the shipped config
// for one CloudWatch path and the fake that stands in for CloudWatch.
type gatewayTarget struct {
	// Name is the harness phase (gateway-<name>-<gpus>gpu).
	Name string
	// Exporter is the metrics exporter whose telemetry is read.
	Exporter string
	// Describe is the pipeline, for the table's heading.
	Describe string
	start    func(t *testing.T) gatewayFake
	configs  []string
	pprof    string
}

// gatewayFake is the CloudWatch endpoint on loopback.
type gatewayFake interface {
	env() []string
	// accepted returns what it took so far: events (EMF) or data points
	// (OTLP) and bytes on the wire.
	accepted() (int64, int64)
	violations() []string
}

// The two CloudWatch paths a gateway ships with.
var (
	emfTarget = gatewayTarget{
		Name: "emf", Exporter: "cloudwatch_emf",
		Describe: "OTLP in → memory_limiter → cloudwatch_emf batching inside its persistent queue → PutLogEvents on loopback",
		start: func(t *testing.T) gatewayFake {
			// It verifies every request's signature (e2etest's default).
			cw := e2etest.StartCloudWatchLogs(t, "us-east-1", cwlogstest.CountOnly())
			return emfFake{cw}
		},
		configs: []string{e2etest.ConfigPath("gateway.yaml"), e2etest.ConfigPath("cloudwatch-emf.yaml"), filepath.Join("testdata", "gateway-load.yaml")},
		pprof:   filepath.Join("testdata", "gateway-pprof.yaml"),
	}
	otlpTarget = gatewayTarget{
		Name: "otlp", Exporter: "otlp_http/cloudwatch_metrics",
		Describe: "OTLP in → memory_limiter → otlp_http (gzip, sigv4auth) batching inside its persistent queue → CloudWatch's OTLP metrics endpoint on loopback",
		start: func(t *testing.T) gatewayFake {
			cw := cwotlptest.New("us-east-1", cwotlptest.Credentials{AccessKeyID: e2etest.TestAccessKeyID, SecretAccessKey: e2etest.TestSecretAccessKey}, cwotlptest.CountOnly())
			t.Cleanup(cw.Close)
			return otlpFake{cw}
		},
		configs: []string{e2etest.ConfigPath("gateway.yaml"), e2etest.ConfigPath("cloudwatch-otlp.yaml"), filepath.Join("testdata", "gateway-otlp-load.yaml")},
		pprof:   filepath.Join("testdata", "gateway-otlp-pprof.yaml"),
	}
)

// gatewayTargets are the paths OTELCOL_ACCEL_LOAD_GATEWAY_TARGETS names
// (emf, otlp; both by default), in that order.
func gatewayTargets(t *testing.T) []gatewayTarget {
	v := os.Getenv("OTELCOL_ACCEL_LOAD_GATEWAY_TARGETS")
	if v == "" {
		return []gatewayTarget{emfTarget, otlpTarget}
	}
	var out []gatewayTarget
	for _, f := range strings.Split(v, ",") {
		switch strings.TrimSpace(f) {
		case emfTarget.Name:
			out = append(out, emfTarget)
		case otlpTarget.Name:
			out = append(out, otlpTarget)
		default:
			t.Fatalf("OTELCOL_ACCEL_LOAD_GATEWAY_TARGETS=%q: the targets are emf and otlp", v)
		}
	}
	return out
}

type emfFake struct{ *e2etest.CloudWatchLogs }

func (f emfFake) env() []string {
	return append(f.CloudWatchEnv(), "LOAD_CLOUDWATCH_ENDPOINT="+f.URL)
}
func (f emfFake) accepted() (int64, int64) { return f.Accepted() }
func (f emfFake) violations() []string     { return f.Violations() }

type otlpFake struct{ *cwotlptest.Server }

func (f otlpFake) env() []string {
	return append(e2etest.AWSTestEnv(f.Region), "LOAD_CLOUDWATCH_OTLP_ENDPOINT="+f.URL)
}
func (f otlpFake) accepted() (int64, int64) { return f.Accepted() }
func (f otlpFake) violations() []string     { return f.Violations() }

// gatewayRun is the gateway fed a fleet's worth of agent output.
type gatewayRun struct {
	Target          string  `json:"target"`
	Pipeline        string  `json:"pipeline"`
	GPUs            int     `json:"gpus"`
	Nodes           int     `json:"nodes"`
	PointsPerRound  int     `json:"points_per_round"`
	Rounds          int     `json:"rounds"`
	IntervalS       float64 `json:"interval_s"`
	CPUSeconds      float64 `json:"cpu_seconds"`
	CPUPerRound     float64 `json:"cpu_seconds_per_round"`
	CorePercent     float64 `json:"percent_of_one_core"`
	Accepted        float64 `json:"points_accepted"`
	Refused         float64 `json:"points_refused"`
	Sent            float64 `json:"points_exported"`
	SendFailed      float64 `json:"points_send_failed"`
	QueueAtEnd      float64 `json:"queue_size_at_end"`
	PointsPerCoreS  float64 `json:"exported_points_per_cpu_second"`
	AcceptedPerCore float64 `json:"accepted_points_per_cpu_second"`
	Events          int64   `json:"emf_events_or_otlp_points"`
	EventBytes      int64   `json:"bytes_on_the_wire"`
	RSSMedianMiB    float64 `json:"rss_median_mib"`
	AnonMedianMiB   float64 `json:"rss_anon_median_mib"`
	RSSMaxMiB       float64 `json:"rss_max_mib"`
	PeakRSSMiB      float64 `json:"vmhwm_mib"`
	SendErrors      int     `json:"send_errors"`
	LateRounds      int     `json:"late_rounds"`
	LoadAvg         [2]float64
	Violations      []string `json:"cloudwatch_violations,omitempty"`
}

// runGateway replays template (one interval of one 8-GPU node's agent
// export) as nodes distinct nodes, each sending once per interval at its
// own phase, to the shipped CloudWatch EMF gateway, and measures the
// gateway over rounds intervals.
func runGateway(ctx context.Context, t *testing.T, target gatewayTarget, template pmetric.Metrics, fromNode string, gpusPerNode, nodes, rounds int, interval time.Duration) *gatewayRun {
	cw := target.start(t)
	configs := append([]string(nil), target.configs...)
	// OTELCOL_ACCEL_LOAD_GATEWAY_CONFIG layers one more config on the
	// gateway, for experiments (a different batch size, EMF options).
	if extra := os.Getenv("OTELCOL_ACCEL_LOAD_GATEWAY_CONFIG"); extra != "" {
		configs = append(configs, extra)
	}
	profile := os.Getenv("OTELCOL_ACCEL_LOAD_PROFILE")
	if profile != "" && target.Name != emfTarget.Name {
		// One file per target: <path>.otlp beside <path>.
		profile += "." + target.Name
	}
	if profile != "" {
		configs = append(configs, target.pprof)
	}
	gw := e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: configs,
		Env:     append(cw.env(), "OTELCOL_ACCEL_QUEUE_DIR="+t.TempDir()),
	})

	payloads := make([]pmetric.Metrics, nodes)
	for n := range payloads {
		payloads[n] = asNode(template, fromNode, n)
	}
	perRound := template.DataPointCount() * nodes
	t.Logf("gateway: %d nodes × %d points = %d points per %s", nodes, template.DataPointCount(), perRound, interval)

	const senders = 8
	clients := make([]*e2etest.OTLPClient, senders)
	for i := range clients {
		c, err := e2etest.DialOTLP(gw.Env[e2etest.EnvOTLPGRPC])
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	// Node n sends at phase n/nodes of the interval, like agents started at
	// random times. The template's timestamps move by one interval a round.
	var sendErrs, late int
	var errMu sync.Mutex
	round := func(r int, start time.Time) {
		var wg sync.WaitGroup
		for s := 0; s < senders; s++ {
			wg.Add(1)
			go func(s int) {
				defer wg.Done()
				for n := s; n < nodes; n += senders {
					at := start.Add(time.Duration(n) * interval / time.Duration(nodes))
					if d := time.Until(at); d > 0 {
						time.Sleep(d)
					}
					shiftTimestamps(payloads[n], interval)
					cctx, cancel := context.WithTimeout(ctx, interval)
					err := clients[s].Send(cctx, payloads[n])
					cancel()
					if err != nil {
						errMu.Lock()
						if sendErrs < 3 {
							t.Logf("round %d node %d: %v", r, n, err)
						}
						sendErrs++
						errMu.Unlock()
					}
				}
			}(s)
		}
		wg.Wait()
		if time.Since(start) > interval {
			late++
		}
	}
	tel := func(family, exporter string) float64 {
		match := []string{}
		if exporter != "" {
			match = []string{"exporter", exporter}
		}
		v, err := gw.Telemetry(family, match...)
		if err != nil {
			t.Fatalf("gateway telemetry: %v", err)
		}
		return v
	}
	const warmup = 2
	start := time.Now().Truncate(time.Second).Add(time.Second)
	for r := 0; r < warmup; r++ {
		round(r, start.Add(time.Duration(r)*interval))
	}
	t0 := start.Add(warmup * interval)
	sleepUntil(ctx, t, t0)
	acc0, ref0 := tel("otelcol_receiver_accepted_metric_points", ""), tel("otelcol_receiver_refused_metric_points", "")
	sent0, fail0 := tel("otelcol_exporter_sent_metric_points", target.Exporter), tel("otelcol_exporter_send_failed_metric_points", target.Exporter)
	ev0, bytes0 := cw.accepted()
	res := &gatewayRun{Target: target.Name, Pipeline: target.Describe, GPUs: nodes * gpusPerNode, Nodes: nodes, PointsPerRound: perRound, Rounds: rounds, IntervalS: interval.Seconds()}
	res.LoadAvg[0], _ = e2etest.MachineLoad()
	w := startWindow(t, gw.PID())
	if profile != "" {
		go cpuProfile(t, "http://"+gw.Env[e2etest.EnvPprof], time.Duration(rounds)*interval, profile)
	}
	for r := 0; r < rounds; r++ {
		round(warmup+r, t0.Add(time.Duration(r)*interval))
	}
	sleepUntil(ctx, t, t0.Add(time.Duration(rounds)*interval))
	w.finish(t)
	res.LoadAvg[1], _ = e2etest.MachineLoad()
	res.Accepted = tel("otelcol_receiver_accepted_metric_points", "") - acc0
	res.Refused = tel("otelcol_receiver_refused_metric_points", "") - ref0
	res.Sent = tel("otelcol_exporter_sent_metric_points", target.Exporter) - sent0
	res.SendFailed = tel("otelcol_exporter_send_failed_metric_points", target.Exporter) - fail0
	res.QueueAtEnd = tel("otelcol_exporter_queue_size", target.Exporter)
	ev1, bytes1 := cw.accepted()
	res.Events, res.EventBytes = ev1-ev0, bytes1-bytes0
	res.CPUSeconds = w.cpuSeconds()
	res.CPUPerRound = res.CPUSeconds / float64(rounds)
	res.CorePercent = 100 * res.CPUSeconds / w.t1.Sub(w.t0).Seconds()
	if res.CPUSeconds > 0 {
		res.PointsPerCoreS = res.Sent / res.CPUSeconds
		res.AcceptedPerCore = res.Accepted / res.CPUSeconds
	}
	res.RSSMedianMiB = float64(w.medianRSS()) / mib
	res.AnonMedianMiB = float64(median(w.anon)) / mib
	res.RSSMaxMiB = float64(w.maxRSS()) / mib
	res.PeakRSSMiB = float64(w.end.PeakRSSBytes) / mib
	res.SendErrors, res.LateRounds = sendErrs, late
	res.Violations = cw.violations()
	if exited, err := gw.Exited(); exited {
		t.Fatalf("gateway exited during the run: %v", err)
	}
	if err := gw.Stop(60 * time.Second); err != nil {
		t.Errorf("gateway did not stop cleanly: %v", err)
	}
	return res
}

func (g *gatewayRun) log(t testing.TB) {
	t.Logf("gateway (%s) %d GPUs (%d nodes): %.2f CPU-s per %gs round (%.1f %% of a core); accepted %.0f, refused %.0f, exported %.0f points (%.0f points/CPU-s exported, %.0f accepted); RSS %.1f MiB median (anon %.1f), max %.1f; %d EMF events or OTLP points at the fake, %.1f MB on the wire; send errors %d, late rounds %d, queue at end %.0f",
		g.Target, g.GPUs, g.Nodes, g.CPUPerRound, g.IntervalS, g.CorePercent, g.Accepted, g.Refused, g.Sent, g.PointsPerCoreS, g.AcceptedPerCore,
		g.RSSMedianMiB, g.AnonMedianMiB, g.RSSMaxMiB, g.Events, float64(g.EventBytes)/1e6, g.SendErrors, g.LateRounds, g.QueueAtEnd)
}

func (g *gatewayRun) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "Gateway (%s), %d GPUs as %d nodes' agent output, one round every %gs, %d rounds measured:\n\n",
		g.Pipeline, g.GPUs, g.Nodes, g.IntervalS, g.Rounds)
	what := "EMF events | EMF MB"
	if g.Target == otlpTarget.Name {
		what = "OTLP points at the fake | MB on the wire (gzip)"
	}
	b.WriteString("| points in / round | CPU-s / round | % of one core | accepted | refused | exported | send failed | exported points / CPU-s | RSS median (anon) | RSS max | VmHWM | " + what + " | queue at end | load 1m |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(b, "| %d | %.2f | %.1f %% | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f MiB (%.1f) | %.1f MiB | %.1f MiB | %d | %.1f | %.0f | %.2f→%.2f |\n\n",
		g.PointsPerRound, g.CPUPerRound, g.CorePercent, g.Accepted, g.Refused, g.Sent, g.SendFailed, g.PointsPerCoreS,
		g.RSSMedianMiB, g.AnonMedianMiB, g.RSSMaxMiB, g.PeakRSSMiB, g.Events, float64(g.EventBytes)/1e6, g.QueueAtEnd, g.LoadAvg[0], g.LoadAvg[1])
	if g.SendErrors > 0 || g.LateRounds > 0 || len(g.Violations) > 0 {
		fmt.Fprintf(b, "Send errors: %d; rounds the sender could not finish within the interval: %d; CloudWatch protocol violations: %d.\n\n", g.SendErrors, g.LateRounds, len(g.Violations))
	}
}

// cpuProfile saves the gateway's CPU profile over d to path (with
// OTELCOL_ACCEL_LOAD_PROFILE=path): where the gateway's time goes.
func cpuProfile(t testing.TB, base string, d time.Duration, path string) {
	resp, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(d.Seconds())))
	if err != nil {
		t.Logf("CPU profile: %v", err)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		t.Logf("CPU profile: %v", err)
		return
	}
	t.Logf("gateway CPU profile written to %s (go tool pprof -top %s)", path, path)
}

// saveTemplate writes the node template the gateway is fed to the file
// OTELCOL_ACCEL_LOAD_SAVE_TEMPLATE names, as OTLP JSON: real agent output
// for the exporters' benchmarks (exporter/emfexporter/testdata).
func saveTemplate(t testing.TB, template pmetric.Metrics) {
	path := os.Getenv("OTELCOL_ACCEL_LOAD_SAVE_TEMPLATE")
	if path == "" {
		return
	}
	b, err := (&pmetric.JSONMarshaler{}).MarshalMetrics(template)
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		t.Logf("saving the template: %v", err)
	}
}
