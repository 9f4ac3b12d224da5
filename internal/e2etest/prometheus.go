package e2etest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Prometheus is a running Prometheus server (the real binary, Debian's
// package in CI) scraping the collector or receiving its remote writes, for
// tests that prove PromQL against what the collector exports.
type Prometheus struct {
	*Process
	// URL is the server's base URL (http://127.0.0.1:<port>).
	URL string
}

// PrometheusOptions says what to scrape and whether to take remote writes.
type PrometheusOptions struct {
	// Targets are host:port of /metrics endpoints, scraped as job
	// "otelcol-accel".
	Targets []string
	// ScrapeInterval defaults to 1s.
	ScrapeInterval time.Duration
	// RemoteWriteReceiver turns on Prometheus's remote-write receiver
	// (--web.enable-remote-write-receiver): samples pushed to
	// RemoteWriteURL are stored as scraped ones are.
	RemoteWriteReceiver bool
}

// PrometheusBinary is $PROMETHEUS_BIN, else prometheus on the PATH. A
// missing binary fails the test: `make e2e` installs it
// (scripts/install-debian-deps.sh).
func PrometheusBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("PROMETHEUS_BIN"); p != "" {
		return p
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus not found on the PATH (set $PROMETHEUS_BIN, or run scripts/install-debian-deps.sh, which make e2e does)")
	}
	return p
}

// StartPrometheus writes a configuration in a temporary directory, starts
// Prometheus with its storage there and its web API on a free loopback port,
// and waits until it is ready.
func StartPrometheus(t testing.TB, opts PrometheusOptions) *Prometheus {
	t.Helper()
	if opts.ScrapeInterval == 0 {
		opts.ScrapeInterval = time.Second
	}
	dir := t.TempDir()
	targets := make([]string, len(opts.Targets))
	for i, tg := range opts.Targets {
		targets[i] = strconv.Quote(tg)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: %[1]s
  scrape_timeout: %[1]s
  evaluation_interval: %[1]s
`, opts.ScrapeInterval)
	if len(targets) > 0 {
		config += fmt.Sprintf(`scrape_configs:
  - job_name: otelcol-accel
    static_configs:
      - targets: [%s]
`, strings.Join(targets, ", "))
	}
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	listen := FreeEndpoint(t)
	args := []string{
		"--config.file=" + configPath,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + listen,
		"--log.level=warn",
	}
	if opts.RemoteWriteReceiver {
		args = append(args, "--web.enable-remote-write-receiver")
	}
	p := &Prometheus{
		Process: StartProcess(t, "prometheus", PrometheusBinary(t), args, nil),
		URL:     "http://" + listen,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		if exited, err := p.Exited(); exited {
			t.Fatalf("prometheus exited: %v\n%s", err, p.Output())
		}
		resp, err := http.Get(p.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("prometheus not ready at %s: %v\n%s", p.URL, err, p.Output())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// RemoteWriteURL is where the remote-write receiver takes samples (with
// RemoteWriteReceiver set).
func (p *Prometheus) RemoteWriteURL() string { return p.URL + "/api/v1/write" }

// Sample is one element of an instant query's result.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// PromQLError is an error Prometheus returned for a query (bad_data for a
// syntax error, execution for a runtime one such as many-to-many matching).
type PromQLError struct {
	Type, Message string
}

func (e *PromQLError) Error() string { return e.Type + ": " + e.Message }

// Query runs an instant query at the current time and returns its samples
// (a scalar result is one sample without labels).
func (p *Prometheus) Query(ctx context.Context, expr string) ([]Sample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.api(ctx, "/api/v1/query?"+url.Values{"query": {expr}}.Encode(), &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(data.Result, &vec); err != nil {
			return nil, err
		}
		out := make([]Sample, 0, len(vec))
		for _, s := range vec {
			v, err := promValue(s.Value[1])
			if err != nil {
				return nil, err
			}
			out = append(out, Sample{Labels: s.Metric, Value: v})
		}
		return out, nil
	case "scalar":
		var sc [2]any
		if err := json.Unmarshal(data.Result, &sc); err != nil {
			return nil, err
		}
		v, err := promValue(sc[1])
		if err != nil {
			return nil, err
		}
		return []Sample{{Value: v}}, nil
	default:
		return nil, fmt.Errorf("result type %q: want an instant vector or a scalar", data.ResultType)
	}
}

// Series is one element of a range-vector query's result: a series and
// its samples in the window, oldest first.
type Series struct {
	Labels  map[string]string
	Samples []TimedSample
}

// TimedSample is one stored sample: its time (milliseconds) and value.
type TimedSample struct {
	Ms    int64
	Value float64
}

// QuerySamples runs a range-vector selector (`metric{…}[1h]`) as an instant
// query and returns the stored samples of each matching series, as written:
// how many there are and with which timestamps, which an instant vector
// hides.
func (p *Prometheus) QuerySamples(ctx context.Context, selector string) ([]Series, error) {
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	}
	if err := p.api(ctx, "/api/v1/query?"+url.Values{"query": {selector}}.Encode(), &data); err != nil {
		return nil, err
	}
	if data.ResultType != "matrix" {
		return nil, fmt.Errorf("result type %q for %s: want a range vector", data.ResultType, selector)
	}
	out := make([]Series, 0, len(data.Result))
	for _, r := range data.Result {
		s := Series{Labels: r.Metric, Samples: make([]TimedSample, 0, len(r.Values))}
		for _, v := range r.Values {
			at, ok := v[0].(float64)
			if !ok {
				return nil, fmt.Errorf("sample time %v is not a number", v[0])
			}
			val, err := promValue(v[1])
			if err != nil {
				return nil, err
			}
			s.Samples = append(s.Samples, TimedSample{Ms: int64(math.Round(at * 1000)), Value: val})
		}
		out = append(out, s)
	}
	return out, nil
}

// LabelValues returns the values of label on the series matching match, as
// Grafana's label_values(match, label) variable query does.
func (p *Prometheus) LabelValues(ctx context.Context, label, match string) ([]string, error) {
	var values []string
	path := "/api/v1/label/" + url.PathEscape(label) + "/values?" + url.Values{"match[]": {match}}.Encode()
	if err := p.api(ctx, path, &values); err != nil {
		return nil, err
	}
	return values, nil
}

func (p *Prometheus) api(ctx context.Context, path string, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var envelope struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return fmt.Errorf("GET %s: %s: %.200s", path, resp.Status, body)
	}
	if envelope.Status != "success" {
		return &PromQLError{Type: envelope.ErrorType, Message: envelope.Error}
	}
	return json.Unmarshal(envelope.Data, data)
}

// promValue parses a sample value: Prometheus sends it as a string so that
// NaN and ±Inf survive JSON.
func promValue(v any) (float64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("sample value %v is not a string", v)
	}
	return strconv.ParseFloat(s, 64)
}
