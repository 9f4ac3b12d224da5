package dcgmreceiver

import (
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/exportersource"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/health"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// FuzzExporterMapping runs arbitrary exporter text all the way to the
// schema: decode, health tracking (twice, so that XID changes and condition
// transitions are exercised) and metric emission. Whatever the input, every
// resource must carry hw.id and the schema's identity attributes, every
// value must be finite, and hw.status must have exactly one state at 1.
func FuzzExporterMapping(f *testing.F) {
	for _, name := range []string{"dcgm-exporter-2.x.txt", "dcgm-exporter-3.x.txt"} {
		f.Add(string(fixture(f, name)), `DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-5f2e1c9a-3b7d-4e8f-a1c2-9d0e6b4f7a31"} 79`)
	}
	f.Add(`DCGM_FI_DEV_ROW_REMAP_PENDING{UUID="GPU-a",GPU_I_ID="1",GPU_I_PROFILE="7g.80gb"} 1`, `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{UUID="GPU-a"} 3`)
	decoder := &exportersource.Decoder{ViolationUnit: exportersource.ViolationUnitAuto}
	f.Fuzz(func(t *testing.T, first, second string) {
		tracker := health.New(time.Minute, time.Hour)
		em := newEmitter(metadata.DefaultMetricsBuilderConfig(), receivertest.NewNopSettings(metadata.Type), time.Unix(0, 0))
		for i, text := range []string{first, second} {
			now := time.Unix(int64(10*(i+1)), 0)
			snap := &model.Snapshot{Time: now, Samples: decoder.Decode(strings.NewReader(text)).Samples}
			for _, rec := range tracker.Observe(snap) {
				if rec.EventName == "" || rec.Class.State == "" || rec.Class.Action == "" {
					t.Fatalf("incomplete health record %+v", rec)
				}
			}
			checkSchema(t, em.emit(snap, tracker, nil, "host"))
		}
	})
}

func checkSchema(t *testing.T, md pmetric.Metrics) {
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		attrs := rm.Resource().Attributes()
		for _, key := range []string{accelschema.AttrHWID, accelschema.AttrHWType, accelschema.AttrKind, accelschema.AttrPartitionType} {
			if v, ok := attrs.Get(key); !ok || v.AsString() == "" {
				t.Fatalf("resource without %s: %v", key, attrs.AsRaw())
			}
		}
		ms := rm.ScopeMetrics().At(0).Metrics()
		states := 0
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			var dps pmetric.NumberDataPointSlice
			if m.Type() == pmetric.MetricTypeGauge {
				dps = m.Gauge().DataPoints()
			} else {
				dps = m.Sum().DataPoints()
			}
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				if dp.ValueType() == pmetric.NumberDataPointValueTypeDouble && (math.IsNaN(dp.DoubleValue()) || math.IsInf(dp.DoubleValue(), 0)) {
					t.Fatalf("%s: non-finite value", m.Name())
				}
				if m.Name() == accelschema.MetricStatus {
					states += int(dp.IntValue())
				}
			}
		}
		if states != 1 {
			t.Fatalf("hw.status has %d states at 1", states)
		}
	}
}
