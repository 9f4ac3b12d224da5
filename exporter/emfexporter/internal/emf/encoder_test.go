package emf

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	as "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/emfvalidate"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

type encoded struct {
	msgs     [][]byte
	docs     []*emfvalidate.Document
	problems []Problem
	stats    Stats
}

// encodeAll encodes every resource of md and checks every event against the
// EMF specification.
func encodeAll(t testing.TB, enc *Encoder, md pmetric.Metrics) encoded {
	t.Helper()
	var out encoded
	maxBytes := enc.maxEventBytes
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		st := enc.EncodeResource(md.ResourceMetrics().At(i), testTime, func(tsMillis int64, msg []byte) {
			doc, err := emfvalidate.Event(msg, maxBytes)
			require.NoError(t, err, "event breaks the EMF rules:\n%s", msg)
			require.Equal(t, tsMillis, doc.Timestamp)
			out.msgs = append(out.msgs, slices.Clone(msg))
			out.docs = append(out.docs, doc)
		}, func(p Problem) { out.problems = append(out.problems, p) })
		out.stats.Add(st)
	}
	return out
}

func TestFleetGolden(t *testing.T) {
	got := encodeAll(t, NewEncoder(projectOptions()), fleetMetrics())
	require.Empty(t, got.problems)
	var buf bytes.Buffer
	for _, m := range got.msgs {
		buf.Write(m)
		buf.WriteByte('\n')
	}
	path := filepath.Join("testdata", "fleet.golden.jsonl")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run `go test ./exporter/emfexporter/internal/emf -run Golden -update` to create it")
	assert.Equal(t, string(want), buf.String())
}

func rootString(t testing.TB, d *emfvalidate.Document, key string) (string, bool) {
	raw, ok := d.Root[key]
	if !ok {
		return "", false
	}
	var s string
	require.NoError(t, json.Unmarshal(raw, &s))
	return s, true
}

func TestMissingDimensionsSkipSetsNeverEmitEmptyValues(t *testing.T) {
	got := encodeAll(t, NewEncoder(projectOptions()), fleetMetrics())
	var sawMIG bool
	for _, d := range got.docs {
		dev, _ := rootString(t, d, "Device")
		if !strings.HasPrefix(dev, "MIG-") {
			continue
		}
		sawMIG = true
		for _, m := range d.Metrics {
			for _, set := range m.Dimensions {
				assert.NotContains(t, set, "Team", "the MIG slice has no team; sets with Team must be skipped")
				assert.NotContains(t, set, "Workload")
			}
		}
		_, hasTeam := d.Root["Team"]
		assert.False(t, hasTeam)
	}
	require.True(t, sawMIG)
}

func TestDatapointAttributesBecomeDimensions(t *testing.T) {
	got := encodeAll(t, NewEncoder(projectOptions()), fleetMetrics())
	found := map[string][][]string{}
	for _, d := range got.docs {
		for _, m := range d.Metrics {
			found[m.Name] = m.Dimensions
		}
	}
	assert.Equal(t, [][]string{{"Cluster", as.AttrWasteReason}}, found[as.MetricWaste],
		"waste is declared with [Cluster] and [Cluster, Team]; the slice has no team; the reason is appended")
	assert.Contains(t, found[as.MetricErrors], []string{"Cluster", "Node", "Device", as.AttrXID, as.AttrErrorType})
	for _, set := range found[as.MetricProcessMemoryUsage] {
		assert.NotContains(t, set, as.AttrProcessPID, "process.pid is excluded from dimensions by default")
	}
}

func TestMoreThan100MetricsAreSpreadOverEvents(t *testing.T) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	gpuResource(rm, "n1", "GPU-0", true)
	sm := rm.ScopeMetrics().AppendEmpty()
	for i := 0; i < 250; i++ {
		gauge(sm, fmt.Sprintf("custom.metric.%03d", i), "1", float64(i), testTime)
	}
	got := encodeAll(t, NewEncoder(projectOptions()), md)
	require.Len(t, got.docs, 3)
	assert.Equal(t, 2, got.stats.Split, "one group of points, three events")
	seen := map[string]int{}
	for _, d := range got.docs {
		assert.LessOrEqual(t, len(d.Metrics)/len(uniqueNames(d)), MaxMetricsPerEvent)
		for n := range uniqueNames(d) {
			seen[n]++
		}
	}
	assert.Len(t, seen, 250)
	for n, c := range seen {
		assert.Equal(t, 1, c, n)
	}
}

func uniqueNames(d *emfvalidate.Document) map[string]bool {
	out := map[string]bool{}
	for _, m := range d.Metrics {
		out[m.Name] = true
	}
	return out
}

func TestDimensionSetsOver30KeysAreSplit(t *testing.T) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	gpuResource(rm, "n1", "GPU-0", true)
	dp := gauge(rm.ScopeMetrics().AppendEmpty(), "wide.metric", "1", 1, testTime)
	for i := 0; i < 40; i++ {
		dp.Attributes().PutStr(fmt.Sprintf("label_%02d", i), fmt.Sprintf("v%d", i))
	}
	got := encodeAll(t, NewEncoder(projectOptions()), md)
	require.Len(t, got.docs, 1)
	sets := got.docs[0].Metrics[0].Dimensions
	covered := map[string]bool{}
	for _, s := range sets {
		assert.LessOrEqual(t, len(s), MaxDimensionsPerSet)
		for _, k := range s {
			covered[k] = true
		}
	}
	for i := 0; i < 40; i++ {
		assert.True(t, covered[fmt.Sprintf("label_%02d", i)], "label_%02d is in no set", i)
	}
	// [Cluster,Node,Device,Partition] is skipped (no partition), the other
	// four sets each need two pieces to carry 40 extra keys.
	assert.Len(t, sets, 8)
}

func TestEventsOverTheSizeLimitAreSplitNotCut(t *testing.T) {
	opts := projectOptions()
	opts.MaxEventBytes = 4096
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	gpuResource(rm, "n1", "GPU-0", true)
	sm := rm.ScopeMetrics().AppendEmpty()
	for i := 0; i < 90; i++ {
		gauge(sm, fmt.Sprintf("a.rather.long.metric.name.to.fill.the.event.%03d", i), "s", float64(i)+0.5, testTime)
	}
	got := encodeAll(t, NewEncoder(opts), md)
	require.Greater(t, len(got.docs), 1)
	total := 0
	for _, m := range got.msgs {
		assert.LessOrEqual(t, len(m), 4096)
	}
	for _, d := range got.docs {
		total += len(uniqueNames(d))
	}
	assert.Equal(t, 90, total)
	assert.Zero(t, got.stats.Skipped)
	assert.Equal(t, len(got.docs)-1, got.stats.Split)
}

func TestOversizedAttributesAreDroppedBeforeTheMetric(t *testing.T) {
	opts := projectOptions()
	opts.MaxEventBytes = 4096
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	gpuResource(rm, "n1", "GPU-0", true)
	rm.Resource().Attributes().PutStr("huge.annotation", strings.Repeat("x", 8000))
	gauge(rm.ScopeMetrics().AppendEmpty(), "m", "1", 1, testTime)
	got := encodeAll(t, NewEncoder(opts), md)
	require.Len(t, got.docs, 1)
	assert.Equal(t, 1, got.stats.Truncated)
	assert.Zero(t, got.stats.Split)
	_, hasHuge := got.docs[0].Root["huge.annotation"]
	assert.False(t, hasHuge)
	_, hasCluster := got.docs[0].Root["Cluster"]
	assert.True(t, hasCluster)
}

func TestLongDimensionValuesAreTruncatedTo1024Bytes(t *testing.T) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	gpuResource(rm, "n1", "GPU-0", true)
	rm.Resource().Attributes().PutStr(as.AttrWorkloadName, strings.Repeat("é", 800)) // 1600 bytes
	gauge(rm.ScopeMetrics().AppendEmpty(), "m", "1", 1, testTime)
	got := encodeAll(t, NewEncoder(projectOptions()), md)
	w, ok := rootString(t, got.docs[0], "Workload")
	require.True(t, ok)
	assert.Len(t, w, 1024)
	raw, _ := rootString(t, got.docs[0], as.AttrWorkloadName)
	assert.Len(t, raw, 1600, "the attribute field itself keeps its value")
}

func TestWideHistogramsAreSplitKeepingTheirDistribution(t *testing.T) {
	md := wideHistogram(250)
	dp := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).ExponentialHistogram().DataPoints().At(0)
	got := encodeAll(t, NewEncoder(projectOptions()), md)
	require.Len(t, got.docs, 3)
	var count, sum float64
	lo, hi := math.Inf(1), math.Inf(-1)
	var values int
	for _, d := range got.docs {
		require.Len(t, d.Metrics, 1)
		var v struct {
			Values, Counts       []float64
			Min, Max, Sum, Count float64
		}
		require.NoError(t, json.Unmarshal(d.Metrics[0].Value, &v))
		values += len(v.Values)
		count += v.Count
		sum += v.Sum
		lo, hi = math.Min(lo, v.Min), math.Max(hi, v.Max)
	}
	assert.Equal(t, 250, values)
	assert.Equal(t, float64(dp.Count()), count)
	assert.InDelta(t, dp.Sum(), sum, 1e-9)
	first, _ := expMidpoint(-200, 5)
	last, _ := expMidpoint(49, 5)
	assert.Equal(t, first, lo)
	assert.Equal(t, last, hi)
}

func TestInvalidPointsAreReportedAndTheRestKept(t *testing.T) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	gpuResource(rm, "n1", "GPU-0", true)
	sm := rm.ScopeMetrics().AppendEmpty()
	gauge(sm, "bad.nan", "1", math.NaN(), testTime)
	gauge(sm, "bad.inf", "1", math.Inf(1), testTime)
	gauge(sm, "bad.huge", "1", math.Ldexp(1, 400), testTime)
	gauge(sm, "", "1", 1, testTime)
	gauge(sm, "good", "1", 2, testTime)
	h := sm.Metrics().AppendEmpty()
	h.SetName("bad.histogram")
	hdp := h.SetEmptyHistogram().DataPoints().AppendEmpty()
	hdp.ExplicitBounds().FromRaw([]float64{1, 2})
	hdp.BucketCounts().FromRaw([]uint64{1})
	hdp.SetCount(1)
	got := encodeAll(t, NewEncoder(projectOptions()), md)
	require.Len(t, got.problems, 5)
	assert.Equal(t, 5, got.stats.Skipped)
	assert.Contains(t, got.problems[0].Reason, "NaN")
	assert.Contains(t, got.problems[4].Reason, "2 explicit bounds")
	require.Len(t, got.docs, 1)
	assert.Equal(t, json.RawMessage("2"), got.docs[0].Root["good"])
}

func TestSameMetricTwiceInAGroupGoesToSeparateEvents(t *testing.T) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	gpuResource(rm, "n1", "GPU-0", true)
	sm := rm.ScopeMetrics().AppendEmpty()
	gauge(sm, "m", "1", 1, testTime)
	sm2 := rm.ScopeMetrics().AppendEmpty()
	gauge(sm2, "m", "1", 2, testTime)
	got := encodeAll(t, NewEncoder(projectOptions()), md)
	require.Len(t, got.docs, 2)
}

func TestFallbackDimensionSet(t *testing.T) {
	// A bare-metal host: no cluster, so every default set is skipped.
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(as.AttrHostName, "gpu-box-3")
	rm.Resource().Attributes().PutStr(as.AttrHWID, "GPU-77")
	gauge(rm.ScopeMetrics().AppendEmpty(), as.MetricPower, as.UnitWatts, 300, testTime)

	got := encodeAll(t, NewEncoder(projectOptions()), md)
	require.Len(t, got.docs, 1)
	assert.Equal(t, [][]string{{"Node", "Device"}}, got.docs[0].Metrics[0].Dimensions)

	opts := projectOptions()
	opts.FallbackToAvailable = false
	got = encodeAll(t, NewEncoder(opts), md)
	require.Len(t, got.docs, 1)
	assert.Empty(t, got.docs[0].Metrics, "without the fallback the metric is a log field only")
	assert.Equal(t, json.RawMessage("300"), got.docs[0].Root[as.MetricPower])
}

func TestUnitsAndResolution(t *testing.T) {
	for ucum, cw := range map[string]string{
		"s": "Seconds", "ms": "Milliseconds", "By": "Bytes", "By/s": "Bytes/Second", "MiBy": "Megabytes",
		"1": "None", "%": "Percent", "{error}": "Count", "{token}/s": "Count/Second", "W": "None",
		"USD": "None", "Cel": "None", "": "None", "{a}{b}": "None", "bit/s": "Bits/Second",
	} {
		assert.Equal(t, cw, CloudWatchUnit(ucum), ucum)
		assert.True(t, IsCloudWatchUnit(cw))
	}
	opts := projectOptions()
	opts.Units = map[string]string{as.MetricGPUUtilization: "Percent"}
	enc := NewEncoder(opts)
	assert.Equal(t, "Percent", enc.info(as.MetricGPUUtilization, "1").unit)
	assert.Equal(t, 1, enc.info(as.MetricRequestsRunning, "{request}").resolution)
	assert.Equal(t, 60, enc.info(as.MetricPower, "W").resolution)
}

func TestMissingTimestampUsesNow(t *testing.T) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	gpuResource(rm, "n1", "GPU-0", true)
	gauge(rm.ScopeMetrics().AppendEmpty(), "m", "1", 1, testTime).SetTimestamp(0)
	got := encodeAll(t, NewEncoder(projectOptions()), md)
	assert.Equal(t, testTime.UnixMilli(), got.docs[0].Timestamp)
}
