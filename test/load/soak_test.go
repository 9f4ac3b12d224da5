//go:build load

package load

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// soakRun is an agent followed for a long run: resident memory against
// time, to show it settles instead of growing.
type soakRun struct {
	GPUs      int          `json:"gpus"`
	IntervalS float64      `json:"interval_s"`
	Speed     float64      `json:"simulator_speed"`
	Duration  string       `json:"duration"`
	Scrapes   int          `json:"scrapes"`
	Samples   []soakSample `json:"samples"`
	// SlopeMiBPerHour is the least-squares trend of RSS over the second
	// half of the run.
	SlopeMiBPerHour     float64 `json:"rss_slope_second_half_mib_per_hour"`
	AnonSlopeMiBPerHour float64 `json:"anon_slope_second_half_mib_per_hour"`
	CPUPerScrape        float64 `json:"cpu_seconds_per_scrape"`
	Points              int64   `json:"points_exported"`
}

type soakSample struct {
	AtS     float64 `json:"at_s"`
	RSSMiB  float64 `json:"rss_mib"`
	AnonMiB float64 `json:"anon_mib"`
}

// runSoak runs the 64-GPU agent at a 1 s interval against a simulator at
// 10× speed (every scrape sees ten simulated seconds pass: workloads
// degrade, bursts come and go, counters and baselines move).
func runSoak(ctx context.Context, t *testing.T, d time.Duration) *soakRun {
	const gpus, interval, speed = 64, time.Second, 10
	sim := e2etest.StartAccelsim(t, e2etest.SimOptions{
		Scenario: filepath.Join(e2etest.RepoRoot(), "test", "load", "testdata", fmt.Sprintf("node-%d.yaml", gpus)),
		Speed:    speed,
	})
	// The inference receiver refuses a scrape timeout longer than the
	// interval.
	fast := e2etest.WriteConfig(t, "soak.yaml", "receivers:\n  inference:\n    scrape_timeout: 900ms\n")
	agent := startAgent(t, sim, fmt.Sprintf("load-%d", gpus), interval, nil, fast)
	waitFlowing(ctx, t, 5*time.Second, agent)
	res := &soakRun{GPUs: gpus, IntervalS: interval.Seconds(), Speed: speed, Duration: d.String()}
	start := time.Now()
	u0, err := e2etest.ReadProcUsage(agent.col.PID())
	if err != nil {
		t.Fatal(err)
	}
	p0 := agent.sink.Points()
	every := d / 60
	if every < time.Second {
		every = time.Second
	}
	for at := time.Duration(0); at <= d; at += every {
		sleepUntil(ctx, t, start.Add(at))
		u, err := e2etest.ReadProcUsage(agent.col.PID())
		if err != nil {
			t.Fatalf("agent: %v\n%s", err, agent.col.Output())
		}
		res.Samples = append(res.Samples, soakSample{AtS: time.Since(start).Seconds(), RSSMiB: float64(u.RSSBytes) / mib, AnonMiB: float64(u.RSSAnonBytes) / mib})
	}
	u1, err := e2etest.ReadProcUsage(agent.col.PID())
	if err != nil {
		t.Fatal(err)
	}
	res.Scrapes = int(time.Since(start) / interval)
	res.CPUPerScrape = (u1.CPUSeconds - u0.CPUSeconds) / float64(res.Scrapes)
	res.Points = agent.sink.Points() - p0
	half := res.Samples[len(res.Samples)/2:]
	res.SlopeMiBPerHour = 3600 * slope(half, func(s soakSample) float64 { return s.RSSMiB })
	res.AnonSlopeMiBPerHour = 3600 * slope(half, func(s soakSample) float64 { return s.AnonMiB })
	if err := agent.col.Stop(30 * time.Second); err != nil {
		t.Errorf("agent did not stop cleanly: %v", err)
	}
	return res
}

// slope is the least-squares slope of y over AtS, per second.
func slope(s []soakSample, y func(soakSample) float64) float64 {
	n := float64(len(s))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for _, p := range s {
		x := p.AtS
		sx += x
		sy += y(p)
		sxx += x * x
		sxy += x * y(p)
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}

func (s *soakRun) log(t testing.TB) {
	first, last := s.Samples[0], s.Samples[len(s.Samples)-1]
	t.Logf("soak %d GPUs, %d scrapes at %gs over %s: RSS %.1f → %.1f MiB (anon %.1f → %.1f), second-half trend %+.1f MiB/h (anon %+.1f), %.4f CPU-s/scrape, %d points",
		s.GPUs, s.Scrapes, s.IntervalS, s.Duration, first.RSSMiB, last.RSSMiB, first.AnonMiB, last.AnonMiB, s.SlopeMiBPerHour, s.AnonSlopeMiBPerHour, s.CPUPerScrape, s.Points)
}

func (s *soakRun) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "Soak: the %d-GPU agent at a %gs interval for %s (%d scrapes; simulator at %g× speed), RSS sampled %d times:\n\n",
		s.GPUs, s.IntervalS, s.Duration, s.Scrapes, s.Speed, len(s.Samples))
	b.WriteString("| at | RSS | anon |\n|---:|---:|---:|\n")
	step := max(1, len(s.Samples)/10)
	for i := 0; i < len(s.Samples); i += step {
		if i+step >= len(s.Samples) {
			i = len(s.Samples) - 1
		}
		p := s.Samples[i]
		fmt.Fprintf(b, "| %.0f s | %.1f MiB | %.1f MiB |\n", p.AtS, p.RSSMiB, p.AnonMiB)
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "Trend over the second half: %+.1f MiB/h RSS, %+.1f MiB/h anonymous. CPU %.4f s per scrape.\n\n", s.SlopeMiBPerHour, s.AnonSlopeMiBPerHour, s.CPUPerScrape)
}
