package emfexporter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/metadata"
)

// agentInterval is one 10-second interval of the shipped 8-GPU node agent's
// export, as the load harness's gateway phase replays it
// (OTELCOL_ACCEL_LOAD_SAVE_TEMPLATE): real output, with its many distinct
// (timestamp, attributes) groups and 19–31 resource attributes a resource.
const agentInterval = "testdata/agent-8gpu-interval.json"

// fleetBatch is nodes copies of the agent's interval, each renamed as its
// own node, as a gateway receives them in one request.
func fleetBatch(b *testing.B, nodes int) pmetric.Metrics {
	raw, err := os.ReadFile(agentInterval)
	require.NoError(b, err)
	one, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(raw)
	require.NoError(b, err)
	md := pmetric.NewMetrics()
	for n := 0; n < nodes; n++ {
		cp := pmetric.NewMetrics()
		one.CopyTo(cp)
		node := fmt.Sprintf("gpu-node-%04d", n)
		for i := 0; i < cp.ResourceMetrics().Len(); i++ {
			cp.ResourceMetrics().At(i).Resource().Attributes().Range(func(k string, v pcommon.Value) bool {
				if v.Type() == pcommon.ValueTypeStr && strings.Contains(v.Str(), "load-8") {
					v.SetStr(strings.ReplaceAll(v.Str(), "load-8", node))
				}
				return true
			})
		}
		cp.ResourceMetrics().MoveAndAppendTo(md.ResourceMetrics())
	}
	return md
}

// BenchmarkPushMetrics is the exporter's whole send path for one request of
// 16 nodes' agent output: EMF encoding, batching per stream, the
// PutLogEvents bodies, SigV4 signing and HTTP over loopback, with the
// default configuration (resource attributes as fields). The server reads
// each body and answers success; it is not cwlogstest, whose decoding and
// checking would cost more than the sending measured here (the tests hold
// the wire to cwlogstest). Run with -cpu 1: the gateway budget is 100k
// exported points per CPU-second.
func BenchmarkPushMetrics(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_, _ = io.WriteString(w, `{"nextSequenceToken":"49039859565436000000000000000000000000000000000000000000"}`)
	}))
	defer srv.Close()
	dir := b.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIDSTATICTEST", "AWS_SECRET_ACCESS_KEY": "static-secret", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_ENDPOINT_URL": "",
	} {
		b.Setenv(k, v)
	}
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Region, cfg.Endpoint = "us-east-1", srv.URL
	cfg.LogGroupName, cfg.LogStreamName = "/otelcol-accel/metrics/{k8s.cluster.name}", "{k8s.node.name}"
	e, err := newEMFExporter(cfg, exportertest.NewNopSettings(metadata.Type))
	require.NoError(b, err)
	require.NoError(b, e.start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(b, e.shutdown(context.Background())) }()

	md := fleetBatch(b, 16)
	points := md.DataPointCount()
	require.NoError(b, e.pushMetrics(context.Background(), md))
	b.ReportAllocs()
	for b.Loop() {
		if err := e.pushMetrics(context.Background(), md); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(points)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
	b.ReportMetric(float64(points), "points/op")
}
