//go:build e2e

package e2e

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// startFaultSim runs accelsim with a scenario written in the test.
func startFaultSim(t *testing.T, scenario string) *e2etest.Sim {
	t.Helper()
	return e2etest.StartAccelsim(t, e2etest.SimOptions{
		Scenario: e2etest.WriteConfig(t, "scenario.yaml", scenario),
		Speed:    1,
	})
}

// faultAgentOverlay shortens the agent's time scale so faults and
// recoveries fit in seconds: a scrape every 2 s, batches flushed at once,
// the kubelet asked every second.
const faultAgentOverlay = `
receivers:
  inference:
    scrape_timeout: 1s
processors:
  batch:
    timeout: 200ms
  accelerator_attributes:
    refresh_interval: 1s
`

// startFaultAgent runs the shipped agent config for a simulated node,
// sending to a sink that keeps what it receives, with overlays layered
// after the node's generated one (so they can override it).
func startFaultAgent(t *testing.T, sim *e2etest.Sim, node string, overlays ...string) (*e2etest.Collector, *e2etest.OTLPSink) {
	t.Helper()
	n := sim.Node(t, node)
	sink := e2etest.StartOTLPSink(t, e2etest.SinkOptions{Keep: true})
	configs := []string{
		e2etest.ConfigPath("agent.yaml"),
		e2etest.ConfigPath("agent-to-gateway.yaml"),
		e2etest.NodeOverlay(t, sim.Endpoints, n),
		e2etest.WriteConfig(t, "fault-agent.yaml", faultAgentOverlay),
	}
	col := e2etest.StartCollector(t, e2etest.CollectorOptions{
		Configs: append(configs, overlays...),
		Env: []string{
			"K8S_NODE_NAME=" + n.Name,
			"OTELCOL_ACCEL_GATEWAY_ENDPOINT=" + sink.Endpoint,
			"OTELCOL_ACCEL_INTERVAL=2s",
		},
	})
	return col, sink
}

// resourcesByDevice indexes a request's device resources by hw.id.
func resourcesByDevice(md pmetric.Metrics) map[string][]pcommon.Map {
	out := map[string][]pcommon.Map{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		attrs := md.ResourceMetrics().At(i).Resource().Attributes()
		if id, ok := attrs.Get(accelschema.AttrHWID); ok {
			out[id.Str()] = append(out[id.Str()], attrs)
		}
	}
	return out
}

func resourceAttr(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	return v.AsString()
}

// hasMetric reports whether md carries a metric with that name.
func carriesMetric(md pmetric.Metrics, name string) bool {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Name() == name {
					return true
				}
			}
		}
	}
	return false
}

// rssAnon is the collector's own memory (heap and stacks), without the
// executable's pages.
func ownMemory(t *testing.T, col *e2etest.Collector) int64 {
	t.Helper()
	u, err := e2etest.ReadProcUsage(col.PID())
	if err != nil {
		t.Fatal(err)
	}
	return u.RSSAnonBytes
}
