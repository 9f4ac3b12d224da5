package dcgmreceiver

import (
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/exportersource"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/health"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// FuzzExporterMapping runs arbitrary exporter text all the way to the
// schema: decode, health tracking (twice, so that XID changes and condition
// transitions are exercised) and metric emission. Whatever the input, every
// resource must carry hw.id and the schema's identity attributes, every
// value must be finite, a GPU's hw.status must have exactly one state at 1
// (a MIG instance has none: it is the GPU's), and every quantity must be
// counted once (internal/accelschema/countcheck).
func FuzzExporterMapping(f *testing.F) {
	for _, name := range []string{"dcgm-exporter-2.x.txt", "dcgm-exporter-3.x.txt"} {
		f.Add(string(fixture(f, name)), `DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-5f2e1c9a-3b7d-4e8f-a1c2-9d0e6b4f7a31"} 79`)
	}
	f.Add(`DCGM_FI_DEV_ROW_REMAP_PENDING{UUID="GPU-a",GPU_I_ID="1",GPU_I_PROFILE="7g.80gb"} 1`, `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{UUID="GPU-a"} 3`)
	for _, name := range quirkFixtures {
		f.Add(string(fixture(f, name)), `DCGM_EXP_XID_ERRORS_COUNT{gpu="0",UUID="GPU-a",xid="13"} 2`)
	}
	f.Add(`DCGM_FI_DEV_POWER_USAGE{UUID="GPU-a",GPU_I_ID="1",pod="p",namespace="n"} 3`+"\n"+`DCGM_FI_DEV_POWER_USAGE{UUID="GPU-a/gi1"} 4`,
		`DCGM_FI_DEV_FB_USED{UUID="GPU-a",dra_mig_device_uuid="MIG-x",dra_claim_name="c"} 5`+"\n"+`DCGM_FI_DEV_GPU_UTIL{UUID="GPU-a",pod="p",namespace="n"} 7`)
	f.Fuzz(func(t *testing.T, first, second string) {
		for _, perPod := range []bool{false, true} {
			fuzzMapping(t, perPod, first, second)
		}
	})
}

func fuzzMapping(t *testing.T, perPod bool, first, second string) {
	decoder := &exportersource.Decoder{ViolationUnit: exportersource.ViolationUnitAuto, PerPodUsage: perPod}
	tracker := health.New(time.Minute, time.Hour)
	em := newEmitter(metadata.NewDefaultMetricsBuilderConfig(), receivertest.NewNopSettings(metadata.Type), time.Unix(0, 0))
	for i, text := range []string{first, second} {
		now := time.Unix(int64(10*(i+1)), 0)
		snap := &model.Snapshot{Time: now, Samples: decoder.Decode(strings.NewReader(text)).Samples}
		for _, rec := range tracker.Observe(snap) {
			if rec.EventName == "" || rec.Class.State == "" || rec.Class.Action == "" {
				t.Fatalf("incomplete health record %+v", rec)
			}
		}
		md := em.emit(snap, tracker, nil, "host")
		checkSchema(t, md)
		if v := countcheck.Violations(md); len(v) > 0 {
			t.Fatalf("per_pod_usage=%v: counted more than once: %v", perPod, v)
		}
	}
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
		want := 1
		if v, _ := attrs.Get(accelschema.AttrPartitionType); v.Str() == accelschema.PartitionMIG {
			want = 0
		}
		if states != want {
			t.Fatalf("hw.status has %d states at 1 on %v", states, attrs.AsRaw())
		}
	}
}
