package acceleratorremediationexporter

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/escalate"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

func withDriver(md pmetric.Metrics, driver string) pmetric.Metrics {
	md.ResourceMetrics().At(0).Resource().Attributes().PutStr(accelschema.AttrHWDriverVersion, driver)
	return md
}

// The incident bundle's recent changes: the device's driver version as its
// metrics and events carried it, and the node's labels as the node watch
// saw them change, within the window and oldest first.
func TestIncidentBundleCarriesRecentChanges(t *testing.T) {
	needServer(t)
	ctx := context.Background()
	k := admin()
	k.mkNode(t, "changes-1", "p5.48xlarge")
	hook := &webhook{}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	clk := &clock{t: t0}
	cfg := testConfig()
	cfg.Mode = engine.Automatic
	cfg.Escalation.Endpoint = srv.URL
	h := start(t, cfg, clk, nil)

	// An old driver change, outside the 10 minute window, then one inside.
	h.e.evidence.addMetrics(withDriver(deviceMetrics("changes-1", "GPU-c", map[time.Time]float64{t0.Add(-30 * time.Minute): 1}), "550.54.15"))
	h.e.evidence.addMetrics(withDriver(deviceMetrics("changes-1", "GPU-c", map[time.Time]float64{t0.Add(-25 * time.Minute): 1}), "560.35.03"))
	h.e.evidence.addMetrics(withDriver(deviceMetrics("changes-1", "GPU-c", map[time.Time]float64{t0.Add(-2 * time.Minute): 1}), "570.124.06"))

	// An operator relabels the node: one label changed, one added, one
	// removed (the node was created with only the instance type).
	waitFor(t, "the node watch to list the nodes", h.e.nodeLabels.Synced)
	n := k.node(t, "changes-1")
	n.Labels["nvidia.com/gpu.deploy.driver"] = "true"
	n.Labels["team"] = "training"
	_, err := server.Client("").CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
	waitFor(t, "the node watch to see the new labels", func() bool { return len(h.e.nodeLabels.Since("changes-1", t0)) == 2 })
	clk.add(time.Second)
	n = k.node(t, "changes-1")
	n.Labels["team"] = "inference"
	delete(n.Labels, "nvidia.com/gpu.deploy.driver")
	_, err = server.Client("").CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
	waitFor(t, "the node watch to see the second change", func() bool { return len(h.e.nodeLabels.Since("changes-1", t0)) == 4 })

	clk.add(time.Second)
	h.send(event{node: "changes-1", device: "GPU-c", xid: 999}) // contact_support: escalates at once
	h.tick()
	got := hook.received()
	require.Len(t, got, 1)
	assert.Equal(t, []escalate.Change{
		{Time: t0.Add(-2 * time.Minute), What: "hw.driver_version", From: "560.35.03", To: "570.124.06"},
		{Time: t0, What: "k8s.node.label.nvidia.com/gpu.deploy.driver", To: "true"},
		{Time: t0, What: "k8s.node.label.team", To: "training"},
		{Time: t0.Add(time.Second), What: "k8s.node.label.nvidia.com/gpu.deploy.driver", From: "true"},
		{Time: t0.Add(time.Second), What: "k8s.node.label.team", From: "training", To: "inference"},
	}, got[0].RecentChanges, "the 550 → 560 change is older than the window")
}
