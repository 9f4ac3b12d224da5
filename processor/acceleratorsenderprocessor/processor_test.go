package acceleratorsenderprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/senderauth"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorsenderprocessor/internal/metadata"
)

var agentOnA = senderauth.Identity{Username: "system:serviceaccount:otelcol-accel:otelcol-accel", PodName: "agent-a", NodeName: "gpu-a"}

func healthLogs(node string, events ...string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	if node != "" {
		rl.Resource().Attributes().PutStr(accelschema.AttrK8sNodeName, node)
	}
	rl.Resource().Attributes().PutStr(accelschema.AttrHWID, "GPU-1")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for _, ev := range events {
		lr := lrs.AppendEmpty()
		if ev != "" {
			lr.Attributes().PutStr(accelschema.AttrEventName, ev)
		}
		lr.Attributes().PutStr(accelschema.AttrHealthReporter, "claimed")
	}
	return ld
}

// Which sender may speak for which node, record by record; what passes
// names the reporter the check saw (never the one claimed), and the
// next consumer gets the check's mark.
func TestLogsVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		id       *senderauth.Identity
		local    bool
		node     string
		reporter string // "" when the health records are dropped
	}{
		{name: "own agent", id: &agentOnA, node: "gpu-a", reporter: "system:serviceaccount:otelcol-accel:otelcol-accel/agent-a@gpu-a"},
		{name: "other node's agent", id: &agentOnA, node: "gpu-b"},
		{name: "no node named", id: &agentOnA, node: ""},
		{name: "not an agent", id: &senderauth.Identity{Username: "system:serviceaccount:ml:vllm", NodeName: "gpu-a"}, node: "gpu-a"},
		{name: "agent token not bound to a node", id: &senderauth.Identity{Username: agentOnA.Username}, node: "gpu-a"},
		{name: "no identity", node: "gpu-a"},
		{name: "no identity, local mode", local: true, node: "gpu-a", reporter: "unauthenticated"},
		{name: "non-agent, local mode", local: true, id: &senderauth.Identity{Username: "system:serviceaccount:ml:vllm", NodeName: "gpu-a"}, node: "gpu-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.AcceptUnauthenticated = tc.local
			next := &markSink{}
			p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, next)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.id != nil {
				ctx = senderauth.NewContext(ctx, *tc.id)
			}
			ld := healthLogs(tc.node, accelschema.EventXID, accelschema.EventFinding, accelschema.EventGPUReset, "accelerator.k8s.scaling", "")
			if err := p.ConsumeLogs(ctx, ld); err != nil {
				t.Fatal(err)
			}
			if !next.marked {
				t.Error("the next consumer did not get the check's mark")
			}
			got := next.AllLogs()[0]
			var health, other int
			rls := got.ResourceLogs()
			for i := 0; i < rls.Len(); i++ {
				lrs := rls.At(i).ScopeLogs().At(0).LogRecords()
				for j := 0; j < lrs.Len(); j++ {
					a := lrs.At(j).Attributes()
					event := ""
					if v, ok := a.Get(accelschema.AttrEventName); ok {
						event = v.Str()
					}
					r, hasReporter := a.Get(accelschema.AttrHealthReporter)
					if accelschema.OnHealthPath(event) {
						health++
						if !hasReporter || r.Str() != tc.reporter {
							t.Errorf("reporter %v, want %q", r.AsRaw(), tc.reporter)
						}
					} else {
						other++
						if hasReporter {
							t.Error("a record off the health path kept a claimed reporter")
						}
					}
				}
			}
			if want := map[bool]int{true: 3, false: 0}[tc.reporter != ""]; health != want {
				t.Errorf("%d health records passed, want %d", health, want)
			}
			if other != 2 {
				t.Errorf("%d other records passed, want 2 (only the health path is checked)", other)
			}
		})
	}
}

// A device's status from another node's agent is dropped; a resource
// that is not a device's passes.
func TestMetricsVerdicts(t *testing.T) {
	next := &consumertest.MetricsSink{}
	p, err := NewFactory().CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), next)
	if err != nil {
		t.Fatal(err)
	}
	md := pmetric.NewMetrics()
	for _, node := range []string{"gpu-a", "gpu-b"} {
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr(accelschema.AttrK8sNodeName, node)
		rm.Resource().Attributes().PutStr(accelschema.AttrHWID, "GPU-"+node)
		rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(1)
	}
	server := md.ResourceMetrics().AppendEmpty() // an inference server's resource: no device
	server.Resource().Attributes().PutStr(accelschema.AttrK8sNodeName, "gpu-b")
	server.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(1)
	if err := p.ConsumeMetrics(senderauth.NewContext(context.Background(), agentOnA), md); err != nil {
		t.Fatal(err)
	}
	got := next.AllMetrics()[0].ResourceMetrics()
	var kept []string
	for i := 0; i < got.Len(); i++ {
		id := ""
		if v, ok := got.At(i).Resource().Attributes().Get(accelschema.AttrHWID); ok {
			id = v.Str()
		}
		kept = append(kept, id)
	}
	if len(kept) != 2 || kept[0] != "GPU-gpu-a" || kept[1] != "" {
		t.Errorf("kept %q, want node a's device and the non-device resource", kept)
	}
}

type markSink struct {
	consumertest.LogsSink
	marked bool
}

func (m *markSink) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	m.marked = senderauth.Checked(ctx)
	return m.LogsSink.ConsumeLogs(ctx, ld)
}
