package neuronmonitor

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/simtest"
)

// What Python and prometheus_client print (checked with python3 and
// prometheus_client.utils.floatToGoString).
func TestFloatToGoString(t *testing.T) {
	for in, want := range map[float64]string{
		16460718080: "1.646071808e+010", 6720876544: "6.720876544e+09", 0.1: "0.1", 1e-05: "1e-05",
		123: "123.0", 1e16: "1e+16", 1234567: "1.234567e+06", 100000: "100000.0", 0: "0.0",
		1.5e-07: "1.5e-07", 12345678.9: "1.23456789e+07", 0.8901827638996558: "0.8901827638996558",
		1748779200.123456: "1.748779200123456e+09", 2.5e+300: "2.5e+300", 1e22: "1e+22", 0.0001: "0.0001",
		123456.5: "123456.5", 1e15: "1e+015", -3.5: "-3.5", 1e7: "1e+07",
	} {
		if got := floatToGoString(in); got != want {
			t.Errorf("floatToGoString(%v) = %q, want %q", in, got, want)
		}
	}
}

// feed runs n reports of a node's monitor through an exporter and returns
// the reports and the page.
func feed(t *testing.T, m *monitor, e *Exporter, n int) ([]map[string]any, []byte) {
	t.Helper()
	var reps []map[string]any
	for range n {
		due, _ := m.NextDue()
		m.clock.T = due
		doc, err := m.Collect(due)
		if err != nil || doc == nil {
			t.Fatalf("collect: %v", err)
		}
		if err := e.Update(doc, due); err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		if err := json.Unmarshal(doc, &r); err != nil {
			t.Fatal(err)
		}
		reps = append(reps, r)
	}
	return reps, e.Render(nil)
}

func parsePage(t *testing.T, page []byte) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("the page is not valid text format: %v", err)
	}
	return fams
}

// find returns the value of the family's sample with these labels.
func find(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no family %s", name)
	}
	var found []float64
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		ok := true
		for k, v := range labels {
			ok = ok && have[k] == v
		}
		if ok {
			found = append(found, m.GetGauge().GetValue()+m.GetCounter().GetValue())
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s%v: %d samples", name, labels, len(found))
	}
	return found[0]
}

// The page says what the reports said, in the script's families and
// labels: ratios, counters that add up the periods, instance labels.
func TestExporterPageFollowsTheReports(t *testing.T) {
	f := simtest.Trn2Fleet(t)
	m := newMonitor(t, f, "neuron-trn2-a", "", 60)
	reps, page := feed(t, m, NewExporter(), 3)
	fams := parsePage(t, page)

	last := reps[2]
	rt := last["neuron_runtime_data"].([]any)[0].(map[string]any)
	tag := rt["neuron_runtime_tag"].(string)
	util := get(rt, "report", "neuroncore_counters", "neuroncores_in_use", "0", "neuroncore_utilization").(float64)
	if got := find(t, fams, "neuroncore_utilization_ratio", map[string]string{"runtime_tag": tag, "neuroncore": "0"}); got != util/100 {
		t.Errorf("utilization of core 0: %v, report says %v%%", got, util)
	}
	completed := 0.0
	for _, r := range reps {
		completed += get(r["neuron_runtime_data"].([]any)[0], "report", "execution_stats", "execution_summary", "completed").(float64)
	}
	if got := find(t, fams, "execution_status_total", map[string]string{"runtime_tag": tag, "status_type": "completed"}); got != completed || completed == 0 {
		t.Errorf("completed: %v, the three reports add up to %v", got, completed)
	}
	tensors := get(rt, "report", "memory_used", "neuron_runtime_used_bytes", "usage_breakdown", "neuroncore_memory_usage", "0", "tensors").(float64)
	if got := find(t, fams, "neuroncore_memory_usage_tensors", map[string]string{"runtime_tag": tag, "neuroncore": "0", "memory_location": "None"}); got != tensors {
		t.Errorf("tensors on core 0: %v, report says %v", got, tensors)
	}
	ii := last["instance_info"].(map[string]any)
	hw := find(t, fams, "neuron_hardware_info", map[string]string{
		"neuron_device_count": "16", "neuroncore_per_device_count": "4",
		"instance_id": ii["instance_id"].(string), "instance_type": "trn2.48xlarge", "availability_zone": "us-east-1a", "region": "us-east-1",
	})
	if hw != 1 {
		t.Errorf("neuron_hardware_info = %v", hw)
	}
	if fams["execution_status_created"] == nil || fams["hardware_ecc_events_created"] == nil {
		t.Error("counters come with their _created families")
	}
	if fams["python_gc_objects_collected_total"] == nil || fams["process_max_fds"] == nil {
		t.Error("prometheus_client's own collectors head the page")
	}
	if fams["execution_latency_seconds"] == nil {
		t.Error("no execution_latency_seconds")
	}
	if e := get(rt, "report", "neuron_runtime_vcpu_usage", "error"); e == "" || fams["neuron_runtime_vcpu_usage_ratio"] != nil {
		t.Errorf("a group with an error (%q) is left out", e)
	}
	if strings.Contains(string(page), "device_latency") || strings.Contains(string(page), "flops") {
		t.Error("the script exports neither device latency nor flops")
	}
}

func TestExporterIsDeterministic(t *testing.T) {
	f := simtest.Trn2Fleet(t)
	_, a := feed(t, newMonitor(t, f, "neuron-trn2-a", "", 60), NewExporter(), 2)
	_, b := feed(t, newMonitor(t, f, "neuron-trn2-a", "", 60), NewExporter(), 2)
	if !bytes.Equal(a, b) {
		t.Error("the same node at the same time gives two pages")
	}
}

// With no runtime the script clears its gauges and counters before every
// update: the ECC counters then hold one period's counts, with a new
// _created each time.
func TestExporterWithoutRuntimesClears(t *testing.T) {
	f := simtest.Fleet(t, `nodes:
  - name: inf
    instance_type: inf2.xlarge
    failures: [{device: 0, at: 1m, ecc: mem_corrected, count: 3}]
`, 1)
	m := newMonitor(t, f, "inf", `{"period":"30s","system_metrics":[{"type":"neuron_hw_counters"}]}`, 1)
	e := NewExporter()
	reps, page := feed(t, m, e, 4) // 0-30 s, 30-60 s, 60-90 s, 90-120 s
	perPeriod := func(i int) float64 {
		return get(reps[i], "system_data", "neuron_hw_counters", "neuron_devices").([]any)[0].(map[string]any)["mem_ecc_corrected"].(float64)
	}
	fams := parsePage(t, page)
	labels := map[string]string{"event_type": "mem_ecc_corrected", "neuron_device_index": "0"}
	if got, want := find(t, fams, "hardware_ecc_events_total", labels), perPeriod(3); got != want {
		t.Errorf("hardware_ecc_events_total = %v, want the last period's %v", got, want)
	}
	total := perPeriod(0) + perPeriod(1) + perPeriod(2) + perPeriod(3)
	if total != 3 {
		t.Fatalf("the failure makes 3 events in all, the reports say %v", total)
	}
	created := find(t, fams, "hardware_ecc_events_created", labels)
	if want := float64(m.clock.T.UnixNano()) / 1e9; created != want {
		t.Errorf("_created = %v, want the last update %v", created, want)
	}
	if _, ok := fams["neuroncore_utilization_ratio"]; ok {
		t.Error("no runtime, no runtime families")
	}
}

// Served over HTTP, each scrape takes in every report due since the last.
func TestExporterHandler(t *testing.T) {
	f := simtest.DemoFleet(t, 0)
	m := newMonitor(t, f, "neuron-inf2-a", "", 60)
	start := m.clock.T
	srv := httptest.NewServer(NewExporterHandler(m.Monitor, m.clock))
	defer srv.Close()
	scrape := func() map[string]*dto.MetricFamily {
		resp, err := http.Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != ExporterContentType {
			t.Errorf("Content-Type %q", ct)
		}
		body, _ := io.ReadAll(resp.Body)
		return parsePage(t, body)
	}
	if fams := scrape(); fams["neuroncore_utilization_ratio"] != nil {
		t.Error("nothing is due before the first period")
	}
	m.clock.T = start.Add(5 * time.Second)
	first := scrape()
	m.clock.T = start.Add(20 * time.Second)
	later := scrape()
	labels := map[string]string{"runtime_tag": "llama-inf2", "status_type": "completed"}
	a, b := find(t, first, "execution_status_total", labels), find(t, later, "execution_status_total", labels)
	if !(a > 0 && b > a) {
		t.Errorf("completed after one period %v, after four %v", a, b)
	}
}
