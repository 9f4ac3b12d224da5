package inferencereceiver

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func errorLogs(h *harness) []string {
	var out []string
	for _, e := range h.logs.All() {
		if e.Level == zapcore.ErrorLevel {
			out = append(out, e.Message+" "+e.ContextMap()["target"].(string)+": "+e.ContextMap()["reason"].(string))
		}
	}
	return out
}

func TestUnreachableTargetDoesNotStopOthers(t *testing.T) {
	good := newFakeServer(t, readFixture(t, "vllm_v1.txt"))
	bad := "http://" + closedPort(t) + "/metrics"
	h := newHarness(t, configFor(
		TargetConfig{Endpoint: good.URL, Server: normalize.VLLM},
		TargetConfig{Endpoint: bad, Server: normalize.SGLang},
	))

	md := h.scrape(t)
	assert.Equal(t, 1, md.ResourceMetrics().Len(), "the reachable target is still scraped")
	ev := h.host.Last()
	require.NotNil(t, ev)
	assert.Equal(t, componentstatus.StatusRecoverableError, ev.Status())
	assert.Contains(t, ev.Err().Error(), bad)
	assert.Contains(t, ev.Err().Error(), "unreachable: dial: connect: connection refused")
	logs := errorLogs(h)
	require.Len(t, logs, 1)
	assert.Contains(t, logs[0], bad)

	// Still down: no new log line within the interval, no new status.
	for range 5 {
		h.clock.advance(15 * time.Second)
		h.scrape(t)
	}
	assert.Len(t, errorLogs(h), 1)
	assert.Len(t, h.host.Statuses(), 1)

	// A reminder once the interval has passed.
	h.clock.advance(defaultErrorLogInterval)
	h.scrape(t)
	logs = errorLogs(h)
	require.Len(t, logs, 2)
	assert.Contains(t, logs[1], "still cannot be scraped")
}

func TestRecoveryReportsOK(t *testing.T) {
	srv := newFakeServer(t, "")
	srv.serve(http.StatusServiceUnavailable, "loading model weights")
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))

	assert.Equal(t, 0, h.scrape(t).ResourceMetrics().Len())
	require.Equal(t, componentstatus.StatusRecoverableError, h.host.Last().Status())
	assert.Contains(t, h.host.Last().Err().Error(), "answered HTTP 503 Service Unavailable instead of metrics")

	srv.serve(http.StatusOK, readFixture(t, "vllm_v1.txt"))
	h.clock.advance(15 * time.Second)
	assert.Equal(t, 1, h.scrape(t).ResourceMetrics().Len())
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}, h.host.Statuses())
	assert.Equal(t, 1, h.logs.FilterMessage("Inference server scraped again").Len())
}

func TestAnswersThatAreNotMetrics(t *testing.T) {
	tests := []struct {
		name, server, body, reason string
	}{
		{"html page", ServerAuto, "<!DOCTYPE html>\n<html><body>Welcome to nginx!</body></html>\n",
			"answered without Prometheus metrics (2 lines, no sample readable); first problem: line 1"},
		{"empty body", normalize.VLLM, "", "answered without Prometheus metrics (0 lines"},
		{"other exporter, auto", ServerAuto, "# TYPE node_load1 gauge\nnode_load1 0.51\nnode_load5 0.32\n",
			"serves 2 samples but none an inference server exposes"},
		{"wrong kind", normalize.Triton, readFixture(t, "vllm_v1.txt"), "but none of triton's metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.body)
			h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: tt.server}))
			assert.Equal(t, 0, h.scrape(t).ResourceMetrics().Len())
			ev := h.host.Last()
			require.NotNil(t, ev)
			assert.Equal(t, componentstatus.StatusRecoverableError, ev.Status())
			assert.Contains(t, ev.Err().Error(), tt.reason)
			require.Len(t, errorLogs(h), 1)
		})
	}
}

func TestSlowTargetTimesOutAlone(t *testing.T) {
	release := make(chan struct{})
	slow := newFakeServer(t, "")
	slow.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	good := newFakeServer(t, readFixture(t, "sglang.txt"))
	h := newHarness(t, configFor(
		TargetConfig{Endpoint: slow.URL, Server: normalize.VLLM, Timeout: 50 * time.Millisecond},
		TargetConfig{Endpoint: good.URL, Server: normalize.SGLang},
	))
	md := h.scrape(t)
	assert.Equal(t, 1, md.ResourceMetrics().Len())
	assert.Contains(t, h.host.Last().Err().Error(), "unreachable: no answer within 50ms (scrape_timeout)")
}

func TestOversizedResponseRefused(t *testing.T) {
	srv := newFakeServer(t, readFixture(t, "vllm_v1.txt"))
	cfg := configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM})
	cfg.MaxResponseBytes = 1024
	h := newHarness(t, cfg)
	assert.Equal(t, 0, h.scrape(t).ResourceMetrics().Len())
	assert.Contains(t, h.host.Last().Err().Error(), "response larger than max_response_bytes (1024)")
}

// Malformed lines are skipped with one warning naming the target and the
// lines; everything else in the scrape is emitted as usual.
func TestMalformedLinesSkippedRestKept(t *testing.T) {
	clean := readFixture(t, "vllm_v1.txt")
	lines := strings.SplitAfter(clean, "\n")
	var broken strings.Builder
	for i, l := range lines {
		broken.WriteString(l)
		switch i {
		case 10:
			broken.WriteString("vllm:num_requests_running{engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\" 14.0\n")
		case 20:
			broken.WriteString("vllm:garbage{engine=\"0\"} fourteen\n")
		case 30:
			broken.WriteString("{\"vllm:unterminated\n")
		}
	}
	srv := newFakeServer(t, broken.String())
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	compareGolden(t, "vllm_v1", h.scrape(t))

	warns := h.logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warns, 1)
	details := warns[0].ContextMap()["details"].(string)
	assert.Contains(t, details, "line 12, column 84: ',' or '}' expected in the label set: ")
	assert.Contains(t, details, `line 23, column 26: value is not a number: "vllm:garbage{engine=\"0\"} fourteen"`)
	assert.Contains(t, details, "line 34, column 20: quoted name is not closed with '\"'")
	assert.Equal(t, srv.URL+"/metrics", warns[0].ContextMap()["target"])
	assert.Empty(t, h.host.Statuses(), "a target serving some bad lines is still up")

	// Rate limited: the same problem at the next scrape logs nothing new.
	h.clock.advance(15 * time.Second)
	h.scrape(t)
	assert.Len(t, h.logs.FilterLevelExact(zapcore.WarnLevel).All(), 1)
}

// A scrape cut off in the middle keeps what arrived before the cut.
func TestTruncatedDocumentKeepsWhatArrived(t *testing.T) {
	clean := readFixture(t, "vllm_v1.txt")
	cut := strings.Index(clean, "vllm:request_success_total{engine=\"1\",finished_reason=\"length\"")
	require.Positive(t, cut)
	srv := newFakeServer(t, clean[:cut+40])
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	got := flatten(h.scrape(t))
	assert.Equal(t, int64(268777+249880), got.intValue(t, "gen_ai.server.tokens", "input"))
	assert.Equal(t, int64(182+162), got.intValue(t, "gen_ai.server.requests", "stop"))
	assert.Zero(t, got.count("gen_ai.server.time_to_first_token"), "after the cut")
	warns := h.logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0].ContextMap()["details"], `line 106, column 41: '=' expected after the label name: "vllm:request_success_total{engine=\"1\",fi"`)
}

// A histogram whose buckets contradict each other is dropped with a warning;
// the other series are kept.
func TestBrokenHistogramDropped(t *testing.T) {
	body := `# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} 9.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.5",model_name="m"} 4.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 10.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 10.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 2.5
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
`
	srv := newFakeServer(t, body)
	h := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	got := flatten(h.scrape(t))
	assert.Zero(t, got.count("gen_ai.server.time_to_first_token"))
	assert.Equal(t, int64(3), got.intValue(t, "gen_ai.server.requests.running", ""))
	warns := h.logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0].ContextMap()["details"],
		`gen_ai.server.time_to_first_token for model "m engine=\"0\"" (from line 2) dropped: bucket le=0.5 count 4 is below the previous bucket's 9`)
}
