package dcgmreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/health"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// everything is a sample with every reading a source can give.
func everything(id model.Identity) model.Sample {
	s := model.Sample{Identity: id,
		Processes:  []model.Process{{PID: 7, MemBytes: model.Of(1 << 30), SMUtil: model.Of(0.5)}},
		PodGPUUtil: []model.PodReading{{Pod: "ns/p", V: 0.5}}, PodMemUsed: []model.PodReading{{Pod: "ns/p", V: 1 << 30}},
	}
	for _, v := range s.Readings() {
		*v = model.Of(1)
	}
	return s
}

// countings returns the counting of every metric emitted per resource.
func countings(t *testing.T, md pmetric.Metrics) map[string]map[accelschema.Counting][]string {
	out := map[string]map[accelschema.Counting][]string{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		id, _ := rm.Resource().Attributes().Get(accelschema.AttrHWID)
		out[id.Str()] = map[accelschema.Counting][]string{}
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			def, ok := accelschema.LookupMetric(ms.At(j).Name())
			require.True(t, ok, ms.At(j).Name())
			out[id.Str()][def.Counted] = append(out[id.Str()][def.Counted], def.Name)
		}
	}
	return out
}

// Whatever a source hands over, the emitted metrics follow the counted-once
// rule of internal/accelschema: a MIG instance carries only what it
// measures, its GPU in MIG mode only what the GPU measures.
func TestEmitPlacesEveryMetricByItsCounting(t *testing.T) {
	gpu := model.Identity{HWID: "GPU-a", Index: 0, PartitionType: accelschema.PartitionNone, Share: 1, GPUInstanceID: -1, ComputeInstanceID: -1}
	inst := model.Identity{HWID: "GPU-a/gi1", Parent: "GPU-a", Index: 0, PartitionType: accelschema.PartitionMIG, PartitionID: "1",
		Profile: "3g.40gb", Share: 0.5, GPUInstanceID: 1, ComputeInstanceID: -1}
	whole := model.Identity{HWID: "GPU-b", Index: 1, PartitionType: accelschema.PartitionNone, Share: 1, GPUInstanceID: -1, ComputeInstanceID: -1}
	parent, mig, other := everything(gpu), everything(inst), everything(whole)
	parent.Partitioned = true
	snap := &model.Snapshot{Time: time.Unix(100, 0), Samples: []model.Sample{parent, mig, other}}
	for i := range snap.Samples {
		snap.Samples[i].KeepOwn()
	}
	tracker := health.New(time.Minute, time.Hour)
	tracker.Observe(snap)
	em := newEmitter(metadata.NewDefaultMetricsBuilderConfig(), receivertest.NewNopSettings(metadata.Type), time.Unix(0, 0))
	md := em.emit(snap, tracker, nil, "host")
	require.Empty(t, countcheck.Violations(md))

	got := countings(t, md)
	assert.Empty(t, got["GPU-a"][accelschema.CountedPerPartition], "a GPU in MIG mode repeats nothing its instances report")
	assert.Contains(t, got["GPU-a"][accelschema.CountedPerDevice], accelschema.MetricGPUMemoryLimit)
	assert.Contains(t, got["GPU-a"][accelschema.CountedPerDevice], accelschema.MetricStatus)
	assert.Empty(t, got["GPU-a/gi1"][accelschema.CountedPerDevice], "no device-scoped metric on a MIG instance, hw.status included")
	assert.Contains(t, got["GPU-a/gi1"][accelschema.CountedPerPartition], accelschema.MetricPartitionMemoryLimit)
	assert.Contains(t, got["GPU-a/gi1"][accelschema.CountedPerPartition], accelschema.MetricProcessMemoryUsage)
	assert.NotEmpty(t, got["GPU-b"][accelschema.CountedPerDevice])
	assert.NotEmpty(t, got["GPU-b"][accelschema.CountedPerPartition], "a whole GPU carries both")
	assert.NotContains(t, got["GPU-b"][accelschema.CountedPerPartition], accelschema.MetricPartitionMemoryLimit)

	assert.Equal(t, map[string]float64{"{hw.gpu.task=general}": 1, "{hw.gpu.task=encoder}": 1, "{hw.gpu.task=decoder}": 1,
		"{accelerator.consumer.pod=ns/p,hw.gpu.task=general}": 0.5}, points(t, md, "GPU-b", accelschema.MetricGPUUtilization))
	assert.Equal(t, map[string]float64{"{}": 1, "{accelerator.consumer.pod=ns/p}": 1 << 30}, points(t, md, "GPU-b", accelschema.MetricGPUMemoryUsage))
}
