package emfexporter

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap/zaptest"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/metadata"
	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/cwlogstest"
	"github.com/otelcol-accel/otelcol-accel/internal/emfvalidate"
)

// verifySignatures makes the fake check every request's SigV4 signature
// with the credentials isolateAWS gives the SDK.
var verifySignatures = cwlogstest.VerifySignatures("AKIDSTATICTEST", "static-secret")

// isolateAWS gives the SDK static test credentials and nothing else to find.
func isolateAWS(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           "AKIDSTATICTEST",
		"AWS_SECRET_ACCESS_KEY":       "static-secret",
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_REGION":                  "",
		"AWS_DEFAULT_REGION":          "",
		"AWS_CONFIG_FILE":             filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_ENDPOINT_URL":            "",
	} {
		t.Setenv(k, v)
	}
}

// testConfig points the exporter at the fake server with fast retries.
func testConfig(srv *cwlogstest.Server) *Config {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Region = srv.Region
	cfg.Endpoint = srv.URL
	cfg.LogGroupName = "/otelcol-accel/{k8s.cluster.name}"
	cfg.LogStreamName = "{k8s.node.name}"
	cfg.RetryConfig.InitialInterval = 5 * time.Millisecond
	cfg.RetryConfig.MaxInterval = 20 * time.Millisecond
	cfg.RetryConfig.RandomizationFactor = 0
	return cfg
}

func createMetricsExporter(t *testing.T, cfg *Config, host component.Host) exporter.Metrics {
	t.Helper()
	set := exportertest.NewNopSettings(metadata.Type)
	// A fixed ID, as a restarted collector has: the persistent queue is
	// stored under it.
	set.ID = component.NewID(metadata.Type)
	if os.Getenv("EMF_DEBUG") != "" {
		set.Logger = zaptest.NewLogger(t)
	}
	exp, err := NewFactory().CreateMetrics(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), host))
	return exp
}

// nodeMetrics is one scrape of a node: n gauges of one device, values
// base+i, all distinct so that every point can be traced.
func nodeMetrics(node string, at time.Time, n int, base float64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	a := rm.Resource().Attributes()
	a.PutStr(as.AttrK8sClusterName, "prod-east")
	a.PutStr(as.AttrK8sNodeName, node)
	a.PutStr(as.AttrHostName, node)
	a.PutStr(as.AttrHWID, "GPU-"+node)
	sm := rm.ScopeMetrics().AppendEmpty()
	for i := 0; i < n; i++ {
		m := sm.Metrics().AppendEmpty()
		m.SetName(fmt.Sprintf("test.gauge.%03d", i))
		m.SetUnit(as.UnitRatio)
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
		dp.SetDoubleValue(base + float64(i))
	}
	return md
}

// received collects the value of every metric of every EMF event the server
// holds, keyed by stream, metric and value: the multiset of points out.
func received(t *testing.T, srv *cwlogstest.Server) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, e := range srv.AllEvents() {
		require.True(t, e.EMF, "metrics are sent with x-amzn-logs-format: json/emf")
		doc, err := emfvalidate.Event([]byte(e.Message), 0)
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, m := range doc.Metrics {
			if seen[m.Name] {
				continue
			}
			seen[m.Name] = true
			out[fmt.Sprintf("%s|%s %s=%s", e.Group, e.Stream, m.Name, m.Value)]++
		}
	}
	return out
}

func sent(mds ...pmetric.Metrics) map[string]int {
	out := map[string]int{}
	for _, md := range mds {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			node, _ := rms.At(i).Resource().Attributes().Get(as.AttrK8sNodeName)
			ms := rms.At(i).ScopeMetrics().At(0).Metrics()
			for j := 0; j < ms.Len(); j++ {
				v, _ := json.Marshal(ms.At(j).Gauge().DataPoints().At(0).DoubleValue())
				out[fmt.Sprintf("/otelcol-accel/prod-east|%s %s=%s", node.Str(), ms.At(j).Name(), v)]++
			}
		}
	}
	return out
}

func total(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

func TestMetricsReachCloudWatchLogsAsValidEMF(t *testing.T) {
	isolateAWS(t)
	srv := cwlogstest.New("us-east-1", verifySignatures)
	defer srv.Close()
	exp := createMetricsExporter(t, testConfig(srv), componenttest.NewNopHost())

	at := time.Now().Truncate(time.Second)
	in := []pmetric.Metrics{nodeMetrics("node-a", at, 150, 0), nodeMetrics("node-b", at, 3, 1000)}
	for _, md := range in {
		require.NoError(t, exp.ConsumeMetrics(context.Background(), md))
	}
	want := sent(in...)
	require.Eventually(t, func() bool { return total(received(t, srv)) == total(want) }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))

	assert.Equal(t, want, received(t, srv))
	assert.Len(t, srv.Events("/otelcol-accel/prod-east", "node-a"), 2, "150 metrics: two events of at most 100")
	assert.Len(t, srv.Events("/otelcol-accel/prod-east", "node-b"), 1)
	assert.Empty(t, srv.Violations())
}

func TestThrottlingAndServerErrorsAreRetriedWithoutLossOrDuplicates(t *testing.T) {
	isolateAWS(t)
	srv := cwlogstest.New("us-east-1", verifySignatures)
	defer srv.Close()
	srv.CreateGroup("/otelcol-accel/prod-east")
	exp := createMetricsExporter(t, testConfig(srv), componenttest.NewNopHost())
	// Streams exist after the first delivery; the faults then hit
	// PutLogEvents of later requests.
	at := time.Now().Truncate(time.Second)
	first := []pmetric.Metrics{nodeMetrics("node-a", at, 2, 0), nodeMetrics("node-b", at, 2, 0)}
	for _, md := range first {
		require.NoError(t, exp.ConsumeMetrics(context.Background(), md))
	}
	require.Eventually(t, func() bool { return total(received(t, srv)) == 4 }, 10*time.Second, 10*time.Millisecond)

	before := srv.Calls("PutLogEvents")
	srv.Inject("PutLogEvents", cwlogstest.Throttling, cwlogstest.Throttling, cwlogstest.InternalError, cwlogstest.Unavailable, cwlogstest.Throttling)
	var in []pmetric.Metrics
	for i := 0; i < 10; i++ {
		// One request holding both nodes: a fault on one stream must retry
		// that node's resource only.
		md := nodeMetrics("node-a", at.Add(time.Duration(i+1)*time.Second), 20, float64(100*i))
		nodeMetrics("node-b", at.Add(time.Duration(i+1)*time.Second), 20, float64(100*i)).ResourceMetrics().MoveAndAppendTo(md.ResourceMetrics())
		in = append(in, md)
		require.NoError(t, exp.ConsumeMetrics(context.Background(), md))
	}
	want := sent(append(first, in...)...)
	require.Eventually(t, func() bool { return total(received(t, srv)) >= total(want) }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))
	assert.Equal(t, want, received(t, srv), "every point exactly once")
	assert.Equal(t, 10*2+5, srv.Calls("PutLogEvents")-before, "one call per stream per request, plus one per fault: only the failed stream is retried")
	assert.Empty(t, srv.Violations())
}

func TestCumulativeCountersArriveAsDeltas(t *testing.T) {
	isolateAWS(t)
	srv := cwlogstest.New("us-east-1", verifySignatures)
	defer srv.Close()
	cfg := testConfig(srv)
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.RetryConfig.Enabled = false
	exp := createMetricsExporter(t, cfg, componenttest.NewNopHost())
	defer func() { require.NoError(t, exp.Shutdown(context.Background())) }()

	start := time.Now() // after the exporter was created: the first value counts
	counter := func(at time.Time, v int64) pmetric.Metrics {
		md := nodeMetrics("node-a", at, 0, 0)
		m := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().AppendEmpty()
		m.SetName(as.MetricTokens)
		m.SetUnit(as.UnitTokens)
		s := m.SetEmptySum()
		s.SetIsMonotonic(true)
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		dp := s.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
		dp.SetIntValue(v)
		dp.Attributes().PutStr(as.AttrTokenType, "output")
		return md
	}
	at := start.Add(10 * time.Second)
	require.NoError(t, exp.ConsumeMetrics(context.Background(), counter(at, 100)))
	require.NoError(t, exp.ConsumeMetrics(context.Background(), counter(at.Add(10*time.Second), 250)))

	// CloudWatch is down: the synchronous send fails and the conversion is
	// undone, so the same cumulative point offered again is not a duplicate.
	srv.SetDown(cwlogstest.Unavailable)
	err := exp.ConsumeMetrics(context.Background(), counter(at.Add(20*time.Second), 300))
	require.Error(t, err, "queue off, CloudWatch down: the failure reaches the caller")
	srv.Up()
	require.NoError(t, exp.ConsumeMetrics(context.Background(), counter(at.Add(20*time.Second), 300)))

	var values []string
	for _, e := range srv.Events("/otelcol-accel/prod-east", "node-a") {
		doc, err := emfvalidate.Event([]byte(e.Message), 0)
		require.NoError(t, err)
		values = append(values, string(doc.Root[as.MetricTokens]))
	}
	assert.Equal(t, []string{"100", "150", "50"}, values)
}

func TestLogsShipAsStructuredJSON(t *testing.T) {
	isolateAWS(t)
	srv := cwlogstest.New("us-east-1", verifySignatures)
	defer srv.Close()
	cfg := testConfig(srv)
	cfg.LogGroupName = "/otelcol-accel/events"
	exp, err := NewFactory().CreateLogs(context.Background(), exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))

	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(as.AttrK8sNodeName, "node-a")
	rl.Resource().Attributes().PutStr(as.AttrHWID, "GPU-1")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	lr.Body().SetStr("Cost finding: idle GPU")
	lr.Attributes().PutStr(as.AttrEventName, as.EventFinding)
	lr.Attributes().PutStr(as.AttrFindingKind, "idle")
	lr.Attributes().PutDouble(as.AttrFindingSavingMonth, 2160.5)
	require.NoError(t, exp.ConsumeLogs(context.Background(), ld))
	require.Eventually(t, func() bool { return len(srv.Events("/otelcol-accel/events", "node-a")) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))

	e := srv.Events("/otelcol-accel/events", "node-a")[0]
	assert.False(t, e.EMF, "log events are not EMF")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(e.Message), &m))
	assert.Equal(t, "Cost finding: idle GPU", m["body"])
	assert.Equal(t, as.EventFinding, m[as.AttrEventName])
	assert.Equal(t, 2160.5, m[as.AttrFindingSavingMonth])
	assert.Equal(t, "GPU-1", m[as.AttrHWID])
	assert.Empty(t, srv.Violations())
}

func TestFileOutputWritesEMFLines(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Output = OutputFile
	cfg.File.Path = filepath.Join(t.TempDir(), "emf.log")
	require.NoError(t, cfg.Validate())
	exp := createMetricsExporter(t, cfg, componenttest.NewNopHost())
	require.NoError(t, exp.ConsumeMetrics(context.Background(), nodeMetrics("node-a", time.Now(), 5, 0)))
	require.NoError(t, exp.Shutdown(context.Background())) // drains the queue

	f, err := os.Open(cfg.File.Path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	lines := 0
	for sc.Scan() {
		lines++
		_, err := emfvalidate.Event(sc.Bytes(), 0)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, lines)
}
