//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/accelsim/endpoints"
	"github.com/otelcol-accel/otelcol-accel/internal/e2etest"
)

const servingNode = `
cluster: fault
seed: 5
nodes:
  - name: gpu-serving
    instance_type: g6.12xlarge
pods:
  - name: vllm-good-0
    namespace: search
    node: gpu-serving
    team: search
    owner: {kind: StatefulSet, name: vllm-good}
    workload: {profile: inference-steady}
    inference: {server: vllm, model: meta-llama/Llama-3.1-8B-Instruct}
    containers:
      - name: vllm
        gpus: [0]
  - name: vllm-torn-0
    namespace: search
    node: gpu-serving
    team: search
    owner: {kind: StatefulSet, name: vllm-torn}
    workload: {profile: inference-steady}
    inference: {server: vllm, model: Qwen/Qwen2.5-7B-Instruct}
    containers:
      - name: vllm
        gpus: [1]
`

const inferenceReceiver = "receiver:inference"

// TestFaultInferenceTargetGarbage: beside a healthy vLLM server, one
// "vLLM" target answers random bytes, one an HTML error page, and one a
// real vLLM page cut off mid-line with junk lines in it. The agent stays
// healthy, keeps scraping the good server every interval, keeps the
// readable part of the torn page, and names each broken target in the log
// once (not once per scrape) and in its status.
func TestFaultInferenceTargetGarbage(t *testing.T) {
	t.Parallel()
	sim := startFaultSim(t, servingNode)
	node := sim.Node(t, "gpu-serving")
	var good, torn endpoints.InferenceTarget
	for _, tg := range node.Inference {
		switch tg.Pod {
		case "vllm-good-0":
			good = tg
		case "vllm-torn-0":
			torn = tg
		}
	}
	if good.URL == "" || torn.URL == "" {
		t.Fatalf("inference servers missing from %+v", node.Inference)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	noise := e2etest.ServeFunc(t, func(w http.ResponseWriter, _ *http.Request) {
		b := make([]byte, 4096)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		_, _ = w.Write(b)
	})
	html := e2etest.ServeFunc(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n")
	})
	// The real page, with junk lines spliced in and the last third cut
	// off mid-line.
	tornURL := e2etest.ServeFunc(t, func(w http.ResponseWriter, _ *http.Request) {
		resp, err := http.Get(torn.URL)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lines := bytes.SplitAfter(page, []byte("\n"))
		var out bytes.Buffer
		for i, l := range lines[:2*len(lines)/3] {
			out.Write(l)
			if i%7 == 3 {
				out.WriteString("vllm:num_requests_running{model_name=\"x\" 1.0\nvllm:kv_cache_usage_perc{engine=\"0\"} not-a-number\n\x00\xff\xfe garbage\n")
			}
		}
		out.WriteString(`vllm:generation_tokens_total{engine="0",model_name="Qwen/Qwen2.5-7B-Instr`)
		_, _ = w.Write(out.Bytes())
	})

	target := func(endpoint string, tg endpoints.InferenceTarget) string {
		return fmt.Sprintf("      - {endpoint: %q, server: vllm, model: %q, pod: {name: %q, namespace: %q, uid: %q, node: %q}}\n",
			endpoint, tg.Model, tg.Pod, tg.Namespace, tg.PodUID, node.Name)
	}
	overlay := "receivers:\n  inference:\n    targets:\n" +
		target(good.URL, good) +
		target(tornURL+"/metrics", torn) +
		fmt.Sprintf("      - {endpoint: %q, server: vllm, model: noise}\n", noise+"/metrics") +
		fmt.Sprintf("      - {endpoint: %q, server: vllm, model: html}\n", html+"/metrics")
	col, sink := startFaultAgent(t, sim, node.Name, e2etest.WriteConfig(t, "targets.yaml", overlay))
	watch := e2etest.WatchHealth(col, 250*time.Millisecond, inferenceReceiver)
	defer watch.Stop()

	// Six scrapes of the good server after the first, each one fresh.
	port := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return u.Port()
	}
	scrapes := map[string]map[int64]bool{port(good.URL): {}, port(tornURL): {}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := sink.WaitMetrics(ctx, 0, func(md pmetric.Metrics) bool {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			seen, ok := scrapes[resourceAttr(rm.Resource().Attributes(), accelschema.AttrServerPort)]
			if !ok {
				continue
			}
			forEachNumberPoint(rm, accelschema.MetricRequestsRunning, func(ts int64) { seen[ts] = true })
		}
		return len(scrapes[port(good.URL)]) >= 6 && len(scrapes[port(tornURL)]) >= 3
	}); err != nil {
		t.Fatalf("the good server was scraped %d times and the torn page read %d times: %v",
			len(scrapes[port(good.URL)]), len(scrapes[port(tornURL)]), err)
	}

	hs, _, err := col.Health()
	if err != nil {
		t.Fatal(err)
	}
	var statusErr string
	for _, st := range hs.ComponentStatuses(inferenceReceiver) {
		statusErr += st.Error
	}
	for _, bad := range []string{noise, html} {
		if n := col.CountLines("cannot be scraped", bad); n != 1 {
			t.Errorf("the broken target %s was logged %d times over 6 scrapes, want once (rate-limited)", bad, n)
		}
		if !strings.Contains(statusErr, bad) {
			t.Errorf("the receiver's status %q does not name %s", statusErr, bad)
		}
	}
	if n := col.CountLines("Skipped unreadable input", tornURL); n != 1 {
		t.Errorf("the torn page's skipped lines were reported %d times over several scrapes, want once (rate-limited)", n)
	}
	if strings.Contains(statusErr, port(good.URL)) || strings.Contains(statusErr, port(tornURL)) {
		t.Errorf("the receiver's status %q names a target that works", statusErr)
	}
	if bad := watch.Stop(); len(bad) > 0 {
		t.Errorf("the agent was unhealthy %d of %d polls: %v", len(bad), watch.Polls(), bad)
	}
	if err := col.Stop(30 * time.Second); err != nil {
		t.Errorf("agent did not stop cleanly: %v", err)
	}
}

// forEachPoint calls f with the timestamp of each point of the named gauge
// or sum in rm.
func forEachNumberPoint(rm pmetric.ResourceMetrics, name string, f func(ts int64)) {
	for j := 0; j < rm.ScopeMetrics().Len(); j++ {
		ms := rm.ScopeMetrics().At(j).Metrics()
		for k := 0; k < ms.Len(); k++ {
			m := ms.At(k)
			if m.Name() != name {
				continue
			}
			var dps pmetric.NumberDataPointSlice
			switch m.Type() {
			case pmetric.MetricTypeGauge:
				dps = m.Gauge().DataPoints()
			case pmetric.MetricTypeSum:
				dps = m.Sum().DataPoints()
			default:
				continue
			}
			for p := 0; p < dps.Len(); p++ {
				f(int64(dps.At(p).Timestamp()))
			}
		}
	}
}
