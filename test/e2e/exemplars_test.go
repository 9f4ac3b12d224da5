//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

// exemplarOnBucket is a latency bucket line of the gateway's OpenMetrics
// page with an exemplar naming a trace and span; group 1 is the pod.
var exemplarOnBucket = regexp.MustCompile(`^gen_ai_server_time_to_first_token_seconds_bucket\{[^}]*k8s_pod_name="([^"]+)"[^}]*\} \S+ # \{[^}]*(span_id="[0-9a-f]{16}"[^}]*trace_id="[0-9a-f]{32}"|trace_id="[0-9a-f]{32}"[^}]*span_id="[0-9a-f]{16}")[^}]*\} \S+`)

// An exemplar the simulated vLLM and SGLang servers put on a latency bucket
// (OpenMetrics, asked for by the agent's inference receiver) reaches the
// gateway over OTLP and comes out of its Prometheus exporter, which shows
// exemplars under OpenMetrics only (enable_open_metrics, layered here).
func TestExemplarsReachTheGateway(t *testing.T) {
	overlay := filepath.Join(t.TempDir(), "openmetrics.yaml")
	if err := os.WriteFile(overlay, []byte("exporters:\n  prometheus:\n    enable_open_metrics: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fleet := e2etest.StartFleet(t, e2etest.FleetOptions{
		Sim:            e2etest.SimOptions{Speed: 20},
		Nodes:          []string{"gpu-h100-a"}, // vllm-llama and sglang-qwen
		GatewayConfigs: []string{overlay},
	})
	want := map[string]bool{"vllm-llama-6b9f7d4c8-k2x7p": false, "sglang-qwen-0": false}
	// The model names read from the servers' pages: the agent reuses a
	// page's buffer for the next scrape, so a name that still pointed
	// into it would arrive garbled.
	models := map[string]string{"vllm-llama-6b9f7d4c8-k2x7p": "meta-llama/Llama-3.1-8B-Instruct", "sglang-qwen-0": "Qwen/Qwen2.5-14B-Instruct"}
	e2etest.Await(t, 2*time.Minute, "a TTFT exemplar with a trace for every inference pod", func() (string, bool) {
		page, err := scrapeOpenMetrics(fleet.Gateway.PrometheusURL())
		if err != nil {
			return err.Error(), false
		}
		for line := range strings.Lines(page) {
			if m := exemplarOnBucket.FindStringSubmatch(line); m != nil {
				if _, ok := want[m[1]]; !ok {
					continue
				}
				if !strings.Contains(line, `gen_ai_request_model="`+models[m[1]]+`"`) {
					t.Fatalf("%s's series does not name its model %s: %s", m[1], models[m[1]], line)
				}
				want[m[1]] = true
			}
		}
		return fmt.Sprintf("exemplars seen: %v", want), want["vllm-llama-6b9f7d4c8-k2x7p"] && want["sglang-qwen-0"]
	})
}

func scrapeOpenMetrics(url string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, url, http.NoBody)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("gateway answered %s: %.200s", resp.Status, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		return "", &contentTypeError{ct}
	}
	return string(b), nil
}

type contentTypeError struct{ got string }

func (e *contentTypeError) Error() string { return "gateway answered " + e.got + ", not OpenMetrics" }
