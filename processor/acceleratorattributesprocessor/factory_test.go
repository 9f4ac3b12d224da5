package acceleratorattributesprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	prt "github.com/otelcol-accel/otelcol-accel/internal/podresources/podresourcestest"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/metadata"
)

// One ID in a metrics and a logs pipeline is one instance: one kubelet
// connection, one refresh, one set of informers.
func TestMetricsAndLogsPipelinesShareOneInstance(t *testing.T) {
	h := newHarness(t)
	h.kubelet.SetPods(prt.Pod("ml", "p", prt.Container("c", prt.Devices("nvidia.com/gpu", gpu0))))
	cfg := h.cfg
	cfg.KubernetesAPI.Enabled = false
	cfg.MIGLookup = migLookupNone

	f := NewFactory()
	set := processortest.NewNopSettings(metadata.Type)
	sink := new(consumertest.MetricsSink)
	mp, err := f.CreateMetrics(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	lp, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	host := componenttest.NewNopHost()
	require.NoError(t, mp.Start(context.Background(), host))
	require.NoError(t, lp.Start(context.Background(), host))
	assert.Equal(t, int64(1), h.kubelet.ListCalls(), "started once")

	md := pmetric.NewMetrics()
	addDevice(md, gpuAttrs(gpu0, 0))
	require.NoError(t, mp.ConsumeMetrics(context.Background(), md))
	got := sink.AllMetrics()[0].ResourceMetrics().At(0).Resource().Attributes()
	assert.Equal(t, "p", strAttr(got, accelschema.AttrK8sPodName))

	require.NoError(t, mp.Shutdown(context.Background()))
	require.NoError(t, lp.Shutdown(context.Background()))
}
