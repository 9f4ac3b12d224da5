package dashboards

import (
	"testing"

	"github.com/otelcol-accel/otelcol-accel/distributions/otelcol-accel/dashboards/promschema"
)

func TestPromNamesMatchTheExporter(t *testing.T) {
	// Names seen on the demo gateway's /metrics: promschema's translation
	// must agree with the exporter's, unit suffixes and all.
	series, err := promschema.Series()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"hw_gpu_utilization_ratio", "hw_status", "hw_errors_total", "hw_power_watts", "hw_temperature_celsius",
		"hw_gpu_memory_usage_bytes", "hw_energy_joules_total", "accelerator_price_USD_per_hour",
		"accelerator_cost_USD_total", "accelerator_waste_USD_total", "accelerator_findings_total",
		"gen_ai_server_time_to_first_token_seconds_bucket", "gen_ai_server_requests_running",
		"gen_ai_server_requests_total", "gen_ai_server_tokens_total", "gen_ai_server_kv_cache_utilization_ratio",
		"accelerator_link_throughput_bytes_per_second", "accelerator_clock_frequency_hertz",
	} {
		if _, ok := series[want]; !ok {
			t.Errorf("%s is not among the translated names", want)
		}
	}
	labels, err := promschema.Labels()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hw_id", "k8s_node_name", "accelerator_team", "accelerator_waste_reason", "gen_ai_request_model"} {
		if _, ok := labels[want]; !ok {
			t.Errorf("label %s is not among the translated attribute keys", want)
		}
	}
}
