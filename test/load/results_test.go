//go:build load

package load

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

type machine struct {
	CPUs      int     `json:"nproc"`
	Model     string  `json:"cpu_model"`
	MemoryGiB float64 `json:"memory_gib"`
	Go        string  `json:"go"`
	Kernel    string  `json:"kernel"`
	LoadStart float64 `json:"load_average_1m_at_start"`
	Started   string  `json:"started"`
}

func describeMachine(t testing.TB) machine {
	m := machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), Started: time.Now().UTC().Format(time.RFC3339)}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			m.MemoryGiB = float64(kb) / (1 << 20)
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadStart, _ = e2etest.MachineLoad()
	return m
}

func (s settings) describe() map[string]any {
	return map[string]any{
		"intervals":    s.intervals,
		"interval":     agentInterval.String(),
		"sizes":        s.sizes,
		"gateway_gpus": s.gatewayGPUs,
		"soak":         s.soak.String(),
		"executables":  executableMode(),
	}
}

type results struct {
	Machine  machine        `json:"machine"`
	Settings map[string]any `json:"settings"`
	Agents   []agentRun     `json:"agents"`
	Gateways []*gatewayRun  `json:"gateways,omitempty"`
	Soak     *soakRun       `json:"soak,omitempty"`
	LoadEnd  float64        `json:"load_average_1m_at_end"`
}

func logAgentRun(t testing.TB, r agentRun) {
	for _, p := range []pipelineResult{r.Agent, r.Reference} {
		t.Logf("%4d GPUs  %-32s %.4f CPU-s/scrape (%.2f %% of a core)  %7.0f points/scrape  %9.0f points/CPU-s  RSS %.1f MiB (max %.1f, VmHWM %.1f)",
			r.GPUs, p.Name, p.CPUPerScrape, p.CorePercent, p.PointsPerScr, p.PointsPerCoreS, p.RSSMedianMiB, p.RSSMaxMiB, p.PeakRSSMiB)
	}
}

func (r *results) write(t testing.TB) {
	r.LoadEnd, _ = e2etest.MachineLoad()
	path := os.Getenv("OTELCOL_ACCEL_LOAD_RESULTS")
	if path == "" {
		path = filepath.Join(e2etest.RepoRoot(), "_build", "load-results.md")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	js, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(strings.TrimSuffix(path, ".md")+".json", js, 0o644); err != nil {
		t.Fatal(err)
	}
	md := r.markdown()
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("results written to %s\n%s", path, md)
}

func (r *results) markdown() string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "Machine: %d CPUs (%s), %.1f GiB, Linux %s, %s; 1-minute load %.2f at start, %.2f at end; started %s.\n\n",
		m.CPUs, m.Model, m.MemoryGiB, m.Kernel, m.Go, m.LoadStart, r.LoadEnd, m.Started)
	fmt.Fprintf(&b, "Settings: %v\n\n", r.Settings)
	if len(r.Agents) > 0 {
		b.WriteString("| GPUs | pipeline (binary) | CPU-s / scrape | % of one core | points / scrape | points / CPU-s | RSS median (anon + file) | RSS max (window) | VmHWM | load 1m |\n")
		b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, a := range r.Agents {
			for _, p := range []pipelineResult{a.Agent, a.Reference} {
				fmt.Fprintf(&b, "| %d | %s (%s, %.1f MiB) | %.4f | %.2f %% | %.0f | %.0f | %.1f MiB (%.1f + %.1f) | %.1f MiB | %.1f MiB | %.2f→%.2f |\n",
					a.GPUs, p.Name, p.Build, p.BinaryMiB, p.CPUPerScrape, p.CorePercent, p.PointsPerScr, p.PointsPerCoreS, p.RSSMedianMiB, p.AnonMedianMiB, p.FileMedianMiB, p.RSSMaxMiB, p.PeakRSSMiB, a.LoadAvg[0], a.LoadAvg[1])
			}
		}
		b.WriteString("\nRatio agent / reference (same node, same window):\n\n")
		b.WriteString("| GPUs | CPU per scrape | points per scrape | RSS median |\n|---:|---:|---:|---:|\n")
		for _, a := range r.Agents {
			fmt.Fprintf(&b, "| %d | %.2f× | %.2f× | %.2f× |\n", a.GPUs,
				ratio(a.Agent.CPUPerScrape, a.Reference.CPUPerScrape),
				ratio(a.Agent.PointsPerScr, a.Reference.PointsPerScr),
				ratio(a.Agent.RSSMedianMiB, a.Reference.RSSMedianMiB))
		}
		b.WriteString("\n")
	}
	for _, g := range r.Gateways {
		g.markdown(&b)
	}
	if s := r.Soak; s != nil {
		s.markdown(&b)
	}
	return b.String()
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
