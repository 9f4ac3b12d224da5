package mapping

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/promreport"
	"github.com/otelcol-accel/otelcol-accel/receiver/neuronreceiver/internal/report"
)

// FuzzMapReport feeds arbitrary documents through the decoder and the
// mapper, twice with the same mapper (so running totals are exercised), and
// checks what must hold for any input: no panic, every value finite, ratios
// in [0, 1], cumulative sums never negative nor decreasing, start times not
// after their timestamps, and every NeuronCore resource placed under its
// device.
func FuzzMapReport(f *testing.F) {
	for _, name := range []string{"inf1-old-release.json", "trn1-idle.json"} {
		raw, err := os.ReadFile(filepath.Join(reportsDir(), name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"neuron_runtime_data":[{"pid":1,"report":{"neuroncore_counters":{"neuroncores_in_use":{"9":{"neuroncore_utilization":250,"flops":-1}}}}}],"neuron_hardware_info":{"neuron_device_count":2,"neuroncore_per_device_count":4}}`))
	f.Add([]byte(`{"system_data":{"neuron_hw_counters":{"neuron_devices":[{"neuron_device_index":1e300,"mem_ecc_uncorrected":-3}]}},"neuron_hardware_info":null}`))
	f.Add([]byte(`{"neuron_runtime_data":[{"pid":7,"neuron_runtime_tag":7,"report":{"execution_stats":{"period":1e308,"execution_summary":{"completed":1.5},"latency_stats":{"total_latency":{"p50":"x"}}}}}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, _, err := report.Decode(doc)
		if err != nil {
			return
		}
		m := newMapper(defaultSettings())
		first := m.Map(r, epoch)
		checkInvariants(t, first.Metrics, pmetric.NewMetrics())
		for _, p := range first.Problems {
			if p.Key == "" || p.Err == nil {
				t.Fatalf("problem without key or error: %#v", p)
			}
		}
		second := m.Map(r, epoch.Add(5*time.Second))
		checkInvariants(t, second.Metrics, first.Metrics)
	})
}

func checkInvariants(t *testing.T, md, previous pmetric.Metrics) {
	t.Helper()
	prevSums := map[string]int64{}
	forEachPoint(previous, func(res, metric string, dp pmetric.NumberDataPoint, sum bool) {
		if sum {
			prevSums[res+metric+attrKey(dp)] = dp.IntValue()
		}
	})
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		attrs := rms.At(i).Resource().Attributes()
		if id, ok := attrs.Get(accelschema.AttrHWID); ok {
			parent, hasParent := attrs.Get(accelschema.AttrHWParent)
			if hasParent && !strings.HasPrefix(id.Str(), parent.Str()+"/neuroncore_") {
				t.Fatalf("core %s is not under its parent %s", id.Str(), parent.Str())
			}
		}
	}
	forEachPoint(md, func(res, metric string, dp pmetric.NumberDataPoint, monotonic bool) {
		if dp.StartTimestamp() > dp.Timestamp() {
			t.Fatalf("%s: start %d after timestamp %d", metric, dp.StartTimestamp(), dp.Timestamp())
		}
		switch dp.ValueType() {
		case pmetric.NumberDataPointValueTypeDouble:
			v := dp.DoubleValue()
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("%s: value %v", metric, v)
			}
			if (metric == accelschema.MetricGPUUtilization || metric == accelschema.MetricGPUMemoryUtilization) && v > 1 {
				t.Fatalf("%s: ratio %v above 1", metric, v)
			}
		case pmetric.NumberDataPointValueTypeInt:
			if dp.IntValue() < 0 && metric != accelschema.MetricStatus {
				t.Fatalf("%s: negative %d", metric, dp.IntValue())
			}
			if monotonic {
				if before, ok := prevSums[res+metric+attrKey(dp)]; ok && dp.IntValue() < before {
					t.Fatalf("%s: cumulative sum went from %d to %d", metric, before, dp.IntValue())
				}
			}
		}
	})
}

func forEachPoint(md pmetric.Metrics, fn func(res, metric string, dp pmetric.NumberDataPoint, monotonicSum bool)) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		res := attrMapKey(rms.At(i).Resource().Attributes().AsRaw())
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				mono := false
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
					mono = m.Sum().IsMonotonic()
				default:
					continue
				}
				for l := 0; l < dps.Len(); l++ {
					fn(res, m.Name(), dps.At(l), mono)
				}
			}
		}
	}
}

func attrKey(dp pmetric.NumberDataPoint) string { return attrMapKey(dp.Attributes().AsRaw()) }

func attrMapKey(m map[string]any) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s=%v;", k, m[k])
	}
	return b.String()
}

// FuzzMapPage does the same for neuron-monitor-prometheus.py's page: any
// page, scraped twice, parses, converts and maps without panicking, and
// what comes out holds the same invariants.
func FuzzMapPage(f *testing.F) {
	for _, name := range []string{"inf2-1.prom", "inf2-2.prom"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "prometheus", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte("neuron_hardware_info{neuron_device_count=\"1\",neuroncore_per_device_count=\"2\"} 1\nneuroncore_utilization_ratio{runtime_tag=\"a\",neuroncore=\"9\"} 7\nexecution_status_total{runtime_tag=\"a\",status_type=\"completed\"} -3\n"))
	f.Add([]byte("hardware_ecc_events_total{event_type=\"mem_ecc_uncorrected\",neuron_device_index=\"99999\"} 1e300\nneuroncore_memory_usage_tensors{runtime_tag=\"a\",neuroncore=\"0\"} NaN\n"))
	f.Fuzz(func(t *testing.T, page []byte) {
		rd := promreport.NewReader()
		m := newMapper(defaultSettings())
		previous := pmetric.NewMetrics()
		for i := range 2 {
			now := epoch.Add(time.Duration(i) * 5 * time.Second)
			rep, problems, err := rd.Report(promreport.Parse(string(page)), now)
			for _, p := range problems {
				if p.Key == "" || p.Err == nil {
					t.Fatalf("problem without key or error: %#v", p)
				}
			}
			if err != nil {
				return
			}
			res := m.Map(rep, now)
			checkInvariants(t, res.Metrics, previous)
			previous = res.Metrics
		}
	})
}
