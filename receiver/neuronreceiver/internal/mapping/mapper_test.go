package mapping

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

// epoch is the fake clock's first report; reports follow every 5 s.
var epoch = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func reportsDir() string { return filepath.Join("..", "..", "testdata", "reports") }

// fixture reads the neuron-monitor documents of a fixture file.
func fixture(t testing.TB, name string) []*report.Report {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(reportsDir(), name))
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(raw))
	var out []*report.Report
	for {
		var doc json.RawMessage
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		r, problems, err := report.Decode(doc)
		require.NoError(t, err)
		require.Empty(t, problems, "fixture %s decodes cleanly", name)
		out = append(out, r)
	}
	return out
}

func defaultSettings() Settings {
	return Settings{
		Metrics:      metadata.NewDefaultMetricsBuilderConfig(),
		Period:       5 * time.Second,
		CoreCounters: true,
		AllRuntimes:  true,
	}
}

func newMapper(s Settings) *Mapper { return New(s, receivertest.NewNopSettings(metadata.Type)) }

func compareMetricsGolden(t *testing.T, name string, got pmetric.Metrics) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, golden.WriteMetricsToFile(path, got, golden.SkipMetricTimestampNormalization()))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err)
	require.NoError(t, pmetrictest.CompareMetrics(want, got,
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()))
}

func compareLogsGolden(t *testing.T, name string, got plog.Logs) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, golden.WriteLogsToFile(path, got))
	}
	want, err := golden.ReadLogs(path)
	require.NoError(t, err)
	require.NoError(t, plogtest.CompareLogs(want, got))
}

func TestTrn2Report(t *testing.T) {
	m := newMapper(defaultSettings())
	res := m.Map(fixture(t, "trn2.json")[0], epoch)
	assert.Empty(t, res.Problems)
	assert.Zero(t, res.Logs.LogRecordCount())
	compareMetricsGolden(t, "trn2.yaml", res.Metrics)

	// 16 devices, 56 held cores (one runtime each), 8 idle cores.
	rms := res.Metrics.ResourceMetrics()
	byPartition := map[string]int{}
	tags := map[string]int{}
	for i := 0; i < rms.Len(); i++ {
		attrs := rms.At(i).Resource().Attributes()
		pt, _ := attrs.Get(accelschema.AttrPartitionType)
		byPartition[pt.Str()]++
		if tag, ok := attrs.Get(accelschema.AttrNeuronRuntimeTag); ok {
			tags[tag.Str()]++
		}
	}
	assert.Equal(t, map[string]int{accelschema.PartitionNone: 16, accelschema.PartitionNeuronCore: 64}, byPartition)
	assert.Equal(t, map[string]int{"llama3-70b-pretrain": 48, "vllm-llama3-8b": 8}, tags)
}

// inf2.json is three reports of one inf2.xlarge: executions accumulate into
// cumulative sums with a fixed start time, ECC events raise health records
// and make the device failed, and in the third report the runtime has
// restarted (new pid), which starts new series.
func TestInf2SequenceAccumulatesAndRaisesHealthEvents(t *testing.T) {
	m := newMapper(defaultSettings())
	allLogs := plog.NewLogs()
	for i, r := range fixture(t, "inf2.json") {
		res := m.Map(r, epoch.Add(time.Duration(i)*5*time.Second))
		for _, p := range res.Problems {
			assert.True(t, strings.Contains(p.Error(), "open /proc/"), "only the vCPU group's error is expected, got %v", p)
		}
		compareMetricsGolden(t, "inf2-"+string(rune('1'+i))+".yaml", res.Metrics)
		res.Logs.ResourceLogs().MoveAndAppendTo(allLogs.ResourceLogs())
	}
	compareLogsGolden(t, "inf2-health.yaml", allLogs)
	// report 2: 2 corrected; report 3: 1 corrected and 1 uncorrected.
	require.Equal(t, 3, allLogs.LogRecordCount())
}

// An inf1 on an old release: four runtimes share the tag "1", one failed,
// one uses the pre-2.5.16 group names, hardware info has only the counts and
// instance_info no region.
func TestInf1OldRelease(t *testing.T) {
	m := newMapper(defaultSettings())
	res := m.Map(fixture(t, "inf1-old-release.json")[0], epoch)
	var keys []string
	for _, p := range res.Problems {
		keys = append(keys, p.Key)
	}
	assert.Contains(t, keys, "neuron_runtime_data/error")
	assert.Contains(t, keys, "neuron_runtime_vcpu_usage/error")
	compareMetricsGolden(t, "inf1-old-release.yaml", res.Metrics)
}

// A trn1n with nothing running: every core is reported idle, device memory
// is zero, and the failed hardware counters group is reported, not guessed.
func TestTrn1IdleWithoutRuntimes(t *testing.T) {
	m := newMapper(defaultSettings())
	res := m.Map(fixture(t, "trn1-idle.json")[0], epoch)
	require.Len(t, res.Problems, 1)
	assert.Equal(t, "neuron_hw_counters/error", res.Problems[0].Key)
	assert.Contains(t, res.Problems[0].Error(), "permission denied")
	compareMetricsGolden(t, "trn1-idle.yaml", res.Metrics)
}

func TestTagFilterMeansUnlistedCoresAreNotCalledIdle(t *testing.T) {
	s := defaultSettings()
	s.AllRuntimes = false
	res := newMapper(s).Map(fixture(t, "trn2.json")[0], epoch)
	rms := res.Metrics.ResourceMetrics()
	assert.Equal(t, 16+56, rms.Len(), "devices and held cores, no made-up idle cores")
	for i := 0; i < rms.Len(); i++ {
		attrs := rms.At(i).Resource().Attributes()
		pt, _ := attrs.Get(accelschema.AttrPartitionType)
		_, tagged := attrs.Get(accelschema.AttrNeuronRuntimeTag)
		assert.True(t, pt.Str() == accelschema.PartitionNone || tagged)
	}
}

func TestHardwareInfoIsRememberedAcrossReports(t *testing.T) {
	m := newMapper(defaultSettings())
	first := fixture(t, "trn2.json")[0]
	m.Map(first, epoch)
	second := fixture(t, "trn2.json")[0]
	second.Hardware = nil
	res := m.Map(second, epoch.Add(5*time.Second))
	assert.Equal(t, 80, res.Metrics.ResourceMetrics().Len())
}

func TestRegionFromZone(t *testing.T) {
	assert.Equal(t, "us-east-2", regionFromZone("us-east-2a"))
	assert.Equal(t, "ap-southeast-1", regionFromZone("ap-southeast-1b"))
	assert.Equal(t, "us-gov-west-1", regionFromZone("us-gov-west-1a"))
	assert.Empty(t, regionFromZone("us-west-2-lax-1a"))
	assert.Empty(t, regionFromZone(""))
}

func TestModelFromInstanceType(t *testing.T) {
	for in, want := range map[string]string{
		"inf1.xlarge": "inferentia", "inf2.48xlarge": "inferentia2", "trn1.32xlarge": "trainium",
		"trn1n.32xlarge": "trainium", "trn2.48xlarge": "trainium2", "trn2u.48xlarge": "trainium2", "p5.48xlarge": "",
	} {
		assert.Equal(t, want, modelFromInstanceType(in), in)
	}
}

// The mapping tables must name only values the schema and metadata.yaml
// agree on: a value missing from the generated enums maps to 0.
func TestSourceTablesMatchTheSchema(t *testing.T) {
	for k, v := range executionStatuses {
		assert.NotZero(t, v, k)
		assert.True(t, accelschema.EnumExecutionStatus.Has(v.String()), k)
	}
	for k, v := range executionErrors {
		assert.NotZero(t, v, k)
		assert.True(t, accelschema.EnumErrorType.Has(v.String()), k)
	}
	for _, e := range eccTable {
		assert.NotZero(t, e.attr, e.source)
		assert.Equal(t, e.errorType, e.attr.String())
	}
	for _, s := range hwStates {
		assert.NotZero(t, metadata.MapAttributeHwState[s], s)
	}
}
