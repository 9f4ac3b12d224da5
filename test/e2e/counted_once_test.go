//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema/countcheck"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// deviceFamilies are device-scoped families as the gateway's Prometheus
// exporter names them, with the data-point labels that tell a device's own
// series apart (a temperature per sensor, a status per state), and whether
// Neuron devices report them too.
//
// A GPU in MIG mode read through dcgm-exporter (every NVIDIA node of the
// demo) has no memory size: the page prints only its instances' memory, and
// their sum is not the GPU's size, so the receiver invents none
// (receiver/dcgmreceiver/README.md, "Counted once"). For those, at most once.
var deviceFamilies = []struct {
	family      string
	labels      []string
	neuron      bool
	migOptional bool
}{
	{"hw_power_watts", nil, false, false},
	{"hw_energy_joules_total", nil, false, false},
	{"hw_temperature_celsius", []string{"hw_sensor_location"}, false, false},
	{"hw_gpu_memory_limit_bytes", nil, true, true},
	{"hw_status", []string{"hw_state"}, true, false},
}

// gatewayOTLPCopy layers an OTLP exporter on the demo gateway's metrics
// pipeline, so the test sees every batch the gateway exports as pdata.
func gatewayOTLPCopy(t *testing.T, sink *e2etest.OTLPSink) string {
	return e2etest.WriteConfig(t, "gateway-otlp-copy.yaml", fmt.Sprintf(`
exporters:
  otlp_grpc/counted_once:
    endpoint: %s
    tls:
      insecure: true
service:
  pipelines:
    metrics:
      exporters: [prometheus, cloudwatch_emf/demo, otlp_grpc/counted_once]
`, sink.Endpoint))
}

// checkCountedOnce sums the device-scoped families over everything the
// gateway exports: each physical device of the simulated fleet — whole,
// MIG, time-sliced, MPS, DRA, Neuron — has exactly one series of each, on
// its own resource (no hw_parent); and every batch the gateway exported
// obeys the counted-once rule (internal/accelschema/countcheck).
func checkCountedOnce(t *testing.T, fleet *e2etest.Fleet, sink *e2etest.OTLPSink, devices []conservedDevice) {
	t.Helper()
	// The price the test waited for comes with the device's other
	// families, most of the time: wait until every device has each one
	// (a family read from a later scrape of the source comes later).
	var fams map[string]*dto.MetricFamily
	e2etest.Await(t, time.Minute, "every device's device-scoped families at the gateway", func() (string, bool) {
		var err error
		if fams, err = e2etest.ScrapePrometheus(fleet.Gateway.PrometheusURL()); err != nil {
			return err.Error(), false
		}
		missing := missingFamilies(fams, devices)
		return "missing: " + strings.Join(missing, ", "), len(missing) == 0
	})
	for _, f := range deviceFamilies {
		series := map[deviceKey][]priceSeries{}
		for _, m := range fams[f.family].GetMetric() {
			s := priceSeries{labels: labelMap(m), value: metricValue(m), ms: m.GetTimestampMs()}
			if p := s.labels["hw_parent"]; p != "" {
				t.Errorf("%s on a partition or consumer copy of %s (%s/%s): device-scoped series live on the device",
					f.family, p, s.labels["accelerator_partition_type"], s.labels["accelerator_partition_id"])
				continue
			}
			k := deviceKey{s.labels["k8s_node_name"], s.labels["hw_id"]}
			series[k] = append(series[k], s)
		}
		for _, d := range devices {
			neuron := strings.HasPrefix(d.dev.ID, "neuron_device_")
			if neuron && !f.neuron {
				continue
			}
			got := map[string]int{}
			for _, s := range latest(series[d.key]) {
				var parts []string
				for _, l := range f.labels {
					parts = append(parts, l+"="+s.labels[l])
				}
				got[strings.Join(parts, ",")]++
			}
			// A migOptional family may be missing from a GPU in MIG mode
			// (see deviceFamilies), never duplicated.
			mayBeAbsent := f.migOptional && len(d.dev.MIG) > 0
			if len(got) == 0 && !mayBeAbsent {
				t.Errorf("%s: no %s series at the gateway", d.key, f.family)
			}
			for k, n := range got {
				if n != 1 {
					t.Errorf("%s: %s{%s} exported %d times in the latest scrape; a physical device counts once", d.key, f.family, k, n)
				}
			}
		}
	}

	batches, _ := sink.Metrics(0)
	var violations []string
	for _, md := range batches {
		violations = append(violations, countcheck.Violations(md)...)
	}
	if len(violations) > 0 {
		sort.Strings(violations)
		violations = compact(violations)
		if len(violations) > 30 {
			violations = append(violations[:30], fmt.Sprintf("… and %d more", len(violations)-30))
		}
		t.Errorf("the gateway exported %d batches; the counted-once rule is broken:\n  %s", len(batches), strings.Join(violations, "\n  "))
	}
	if len(batches) == 0 {
		t.Error("the gateway exported no metrics batch to the OTLP copy")
	}
}

// missingFamilies names each device and family of deviceFamilies with no
// series on the device's own resource.
func missingFamilies(fams map[string]*dto.MetricFamily, devices []conservedDevice) []string {
	var missing []string
	for _, f := range deviceFamilies {
		has := map[deviceKey]bool{}
		for _, m := range fams[f.family].GetMetric() {
			l := labelMap(m)
			if l["hw_parent"] == "" {
				has[deviceKey{l["k8s_node_name"], l["hw_id"]}] = true
			}
		}
		for _, d := range devices {
			neuron := strings.HasPrefix(d.dev.ID, "neuron_device_")
			if (neuron && !f.neuron) || (f.migOptional && len(d.dev.MIG) > 0) || has[d.key] {
				continue
			}
			missing = append(missing, d.key.String()+" "+f.family)
		}
	}
	return missing
}

func compact(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}
