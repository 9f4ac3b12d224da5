//go:build e2e

package browser

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// EnvInsights is the console's listen address in the demo gateway's config.
const EnvInsights = "OTELCOL_ACCEL_INSIGHTS_ENDPOINT"

// consoleFleet is the demo topology (`make run`) with the console on a free
// port of the gateway.
type consoleFleet struct {
	*e2etest.Fleet
	// Base is the console's URL ("http://127.0.0.1:port/").
	Base string
	API  API
	// gatewayConfigs are the gateway's --config flags, for a restart.
	gatewayConfigs []string
	// owner is the test the fleet was started for: a restarted gateway
	// lives as long as it, not as long as the subtest that restarted it.
	owner *testing.T
}

func startConsoleFleet(t *testing.T, gatewayConfigs, gatewayEnv []string) *consoleFleet {
	t.Helper()
	insights := e2etest.FreeEndpoint(t)
	// Findings are raised again after a cooldown (demo-agent.yaml: 1 h);
	// 30 s here, so a restarted gateway hears them again within the test,
	// as a real one does within the hour.
	cooldown := e2etest.WriteConfig(t, "findings-cooldown.yaml", `
processors:
  accelerator_cost:
    findings:
      cooldown: 30s
`)
	fleet := e2etest.StartFleet(t, e2etest.FleetOptions{
		AgentConfigs: []string{cooldown},
		// 20× speed, as the demo test: row remap at 30 s, XID 48 at 60 s,
		// Neuron ECC at 75 s, XID 79 at 90 s; findings after a minute.
		Sim:            e2etest.SimOptions{Speed: 20},
		GatewayConfigs: gatewayConfigs,
		GatewayEnv:     append([]string{EnvInsights + "=" + insights}, gatewayEnv...),
		// make run's gateway: the Kubernetes side of the endpoints and
		// remediation plans waiting for the console's Approve.
		Cluster: true,
	})
	base := "http://" + insights + "/"
	configs := append([]string{e2etest.ConfigPath("gateway.yaml"), e2etest.ConfigPath("demo-gateway.yaml")}, e2etest.ClusterGatewayConfigs()...)
	configs = append(configs, gatewayConfigs...)
	return &consoleFleet{Fleet: fleet, Base: base, API: API{Base: base}, gatewayConfigs: configs, owner: t}
}

// restartGateway stops the gateway and starts it again with the same
// configuration, ports and storage directory, as a rollout would; the agents
// keep sending to the same address.
func (f *consoleFleet) restartGateway(t *testing.T) {
	t.Helper()
	env := make([]string, 0, len(f.Gateway.Env))
	for k, v := range f.Gateway.Env {
		env = append(env, k+"="+v)
	}
	if err := f.Gateway.Stop(30 * time.Second); err != nil {
		t.Logf("stopping the gateway: %v", err)
	}
	f.Gateway = e2etest.StartCollector(f.owner, e2etest.CollectorOptions{
		Configs:        f.gatewayConfigs,
		Env:            env,
		HealthEndpoint: f.Gateway.Env[e2etest.EnvHealth],
	})
}

// screenshotDir is where a run's screenshots go: $INSIGHTS_SCREENSHOTS, else
// _build/screenshots/insights/<backend> in the repository.
func screenshotDir(t *testing.T, backend string) string {
	dir := os.Getenv("INSIGHTS_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(e2etest.RepoRoot(), "_build", "screenshots", "insights")
	}
	dir = filepath.Join(dir, backend)
	t.Logf("screenshots of the console (%s backend): %s", backend, dir)
	return dir
}

// deviceKey names a physical device: hw.id is unique only within a node
// (neuron_device_0 exists on every Neuron node).
type deviceKey struct{ node, id string }

// truth is what the gateway's Prometheus output says about the fleet: the
// numbers the console must agree with.
type truth struct {
	devices map[deviceKey]bool
	// failed are devices whose hw_status is failed, with the XID the
	// device reported (0 when none).
	failed map[deviceKey]int
	// health is each device's hw_status state (the one at 1).
	health map[deviceKey]string
	// teamCost is the price per hour of what each team holds: the sum of
	// accelerator_price (counted per share, so each device is paid once).
	teamCost map[string]float64
}

func readTruth(fams map[string]*dto.MetricFamily) truth {
	tr := truth{devices: map[deviceKey]bool{}, failed: map[deviceKey]int{}, health: map[deviceKey]string{}, teamCost: map[string]float64{}}
	for _, m := range fams["hw_status"].GetMetric() {
		if e2etest.Label(m, "hw_parent") != "" {
			continue
		}
		k := deviceKey{e2etest.Label(m, "k8s_node_name"), e2etest.Label(m, "hw_id")}
		tr.devices[k] = true
		if m.GetGauge().GetValue() != 1 {
			continue
		}
		state := e2etest.Label(m, "hw_state")
		tr.health[k] = state
		if state == "failed" {
			tr.failed[k] = 0
		}
	}
	for _, m := range fams["hw_errors_total"].GetMetric() {
		k := deviceKey{e2etest.Label(m, "k8s_node_name"), e2etest.Label(m, "hw_id")}
		if _, ok := tr.failed[k]; !ok || e2etest.Label(m, "error_type") != "xid" || m.GetCounter().GetValue() <= 0 {
			continue
		}
		if code, err := strconv.Atoi(e2etest.Label(m, "accelerator_xid")); err == nil {
			tr.failed[k] = code
		}
	}
	for _, m := range fams["accelerator_price_USD_per_hour"].GetMetric() {
		if team := e2etest.Label(m, "accelerator_team"); team != "" {
			tr.teamCost[team] += m.GetGauge().GetValue()
		}
	}
	return tr
}

// waitForFleet waits until the gateway's Prometheus output has every
// simulated device, a GPU failed by an XID, and the console has that many
// devices and a finding; it returns the truth read last.
func waitForFleet(t *testing.T, f *consoleFleet) truth {
	t.Helper()
	want := 0
	for _, n := range f.Sim.Endpoints.Nodes {
		want += len(n.Devices)
	}
	var tr truth
	seen, ok := e2etest.AwaitResult(5*time.Minute, func() (string, bool) {
		fams, err := e2etest.ScrapePrometheus(f.Gateway.PrometheusURL())
		if err != nil {
			return err.Error(), false
		}
		tr = readTruth(fams)
		var fleet Fleet
		var findings Findings
		switch {
		case len(tr.devices) != want:
			return fmt.Sprintf("the gateway exports %d of %d devices", len(tr.devices), want), false
		case !anyXID(tr.failed):
			return "no GPU failed by an XID yet", false
		case f.API.Get("fleet", nil, &fleet) != nil || fleet.Devices.Total != want:
			return fmt.Sprintf("the console counts %d of %d devices", fleet.Devices.Total, want), false
		case f.API.Get("findings", nil, &findings) != nil || findings.Total == 0:
			return "the console has no finding yet", false
		}
		return "", true
	})
	if !ok {
		t.Fatalf("the fleet is not ready after 5m: %s\n---- gateway log ----\n%s", seen, tail(f.Gateway.Output(), 60))
	}
	return tr
}

// pageWait bounds how long a page may take to show what the gateway's
// Prometheus output already has: a few of the console's refreshes, on a
// loaded machine.
const pageWait = time.Minute

// scrape reads the gateway's Prometheus output.
func scrape(t *testing.T, f *consoleFleet) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := e2etest.ScrapePrometheus(f.Gateway.PrometheusURL())
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func anyXID(failed map[deviceKey]int) bool {
	for _, code := range failed {
		if code != 0 {
			return true
		}
	}
	return false
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// money parses what the console shows for dollars ("$1,234.56/h",
// "$830.50").
func money(t *testing.T, text string) float64 {
	t.Helper()
	s := strings.NewReplacer("$", "", ",", "", "/h", "", "/mo", "").Replace(strings.TrimSpace(text))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q is not an amount of dollars", text)
	}
	return v
}

// words is how the console writes an enum value (reboot_node → reboot node).
func words(v string) string { return strings.ReplaceAll(v, "_", " ") }

func query(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Add(kv[i], kv[i+1])
	}
	return q
}

// pickXIDFailure returns a failed device of the truth with its XID.
func pickXIDFailure(tr truth) (deviceKey, int) {
	var best deviceKey
	code := 0
	for k, c := range tr.failed {
		if c != 0 && (code == 0 || k.node+k.id < best.node+best.id) {
			best, code = k, c
		}
	}
	return best, code
}

// expectedAction is the recommended action of an XID (internal/xid).
func expectedAction(code int) string { return xid.Lookup(code).Action }

// healthCounts counts the devices in each hw_status state.
func (tr truth) healthCounts() map[string]int {
	out := map[string]int{}
	for _, state := range tr.health {
		out[state]++
	}
	return out
}
