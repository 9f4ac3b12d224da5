package acceleratorattributesprocessor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-accel/otelcol-accel/distributions/otelcol-accel/dashboards/promschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/metadata"
)

// Issue 29's "done when": a pipeline with accelerator_attributes and no
// accelerator_cost, on a GPU time-sliced between two pods that nothing
// measures per pod, exported by the contrib prometheus exporter configured as
// the agent's (distributions/otelcol-accel/config/agent.yaml: every resource
// attribute a label): a scrape names both holders with share 0.5.
func TestAttributesOnlyPipelineNamesTimeSlicedHoldersInPrometheus(t *testing.T) {
	h := newHarness(t, holdingsNode()...)
	holdingsKubelet(h.kubelet)
	h.start()

	endpoint := freeLocalAddress(t)
	factory := prometheusexporter.NewFactory()
	cfg := factory.CreateDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"endpoint":                 endpoint,
		"resource_constant_labels": map[string]any{"included": []any{"*"}},
	}).Unmarshal(cfg))
	exp, err := factory.CreateMetrics(context.Background(), exportertest.NewNopSettings(factory.Type()), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, exp.Shutdown(context.Background())) })

	// The processor as the pipeline runs it (processorhelper), with the
	// exporter next.
	proc, err := processorhelper.NewMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), h.cfg, exp,
		h.p.processMetrics, processorhelper.WithCapabilities(processorCapabilities))
	require.NoError(t, err)
	md := holdingsBatch()
	stampNow(md) // the exporter drops points older than metric_expiration
	require.NoError(t, proc.ConsumeMetrics(context.Background(), md))

	name, err := promschema.MetricName(accelschema.MustMetric("test", accelschema.MetricAllocationShare))
	require.NoError(t, err)
	// sum by (k8s_pod_name) of the scraped series, and the time-sliced
	// GPU's holders with their labels.
	var byPod map[string]float64
	var shared []map[string]string
	var last string
	require.Eventually(t, func() bool {
		families, body, err := scrape(endpoint)
		last = fmt.Sprintf("%s\n%v", body, err)
		if err != nil || families[name] == nil {
			return false
		}
		byPod, shared = map[string]float64{}, nil
		for _, m := range families[name].GetMetric() {
			labels := labelMap(m)
			byPod[labels["k8s_pod_name"]] += m.GetGauge().GetValue()
			if labels["hw_id"] == gpu0 {
				shared = append(shared, labels)
			}
		}
		return true
	}, 10*time.Second, 20*time.Millisecond, "no %s in the scrape; last saw:\n%s", name, last)

	assert.Equal(t, 0.5, byPod["chat-a"], "chat-a holds one of two replicas")
	assert.Equal(t, 0.5, byPod["chat-b"], "chat-b holds the other")
	assert.Equal(t, 1.0, byPod["train-0"], "the whole GPU's holder")
	assert.Equal(t, 0.5, byPod["notebook-0"], "the MIG instance's holder")
	require.Len(t, shared, 2, "one series per holder of the time-sliced GPU; the device's own names nobody at share 0")
	for _, l := range shared {
		assert.Equal(t, "search", l["accelerator_team"])
		assert.Equal(t, "serve", l["k8s_namespace_name"])
		assert.Equal(t, accelschema.PartitionTimeSlicing, l["accelerator_partition_type"])
		assert.Equal(t, gpu0, l["hw_parent"])
	}
}

// freeLocalAddress is a loopback address nothing listens on.
func freeLocalAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func scrape(endpoint string) (map[string]*dto.MetricFamily, string, error) {
	resp, err := http.Get("http://" + endpoint + "/metrics")
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, string(body), fmt.Errorf("status %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	return families, string(body), err
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// stampNow dates the batch's points now, as a live scrape's are.
func stampNow(md pmetric.Metrics) {
	now := pcommon.NewTimestampFromTime(time.Now())
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		forEachMetric(rms.At(i), func(m pmetric.Metric) {
			dps, _ := numberPoints(m)
			for k := 0; k < dps.Len(); k++ {
				dps.At(k).SetTimestamp(now)
			}
		})
	}
}
