// Package promstore is the Prometheus backend: it builds the same
// fleet.Snapshot as the in-memory model from PromQL over HTTP
// (/api/v1/query and /api/v1/query_range) against Prometheus, Amazon Managed
// Prometheus, Mimir or Thanos, reading the series the gateways' prometheus
// exporters (or remote write) put there, under the names
// dashboards/promschema translates from internal/accelschema.
package promstore

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxBody bounds an answer: 10,000 devices' worth of series with all
// their labels is a few tens of MiB.
const maxBody = 256 << 20

// sample is one series of an instant vector (or one point of a matrix).
type sample struct {
	labels map[string]string
	value  float64
}

type rangeSeries struct {
	labels map[string]string
	points [][2]float64 // unix seconds, value
}

type apiResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string            `json:"resultType"`
		Result     []json.RawMessage `json:"result"`
	} `json:"data"`
}

type vectorItem struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

type matrixItem struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

// client speaks Prometheus's HTTP query API.
type client struct {
	http *http.Client
	base string
}

func (c *client) do(ctx context.Context, path string, form url.Values) (*apiResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.base, "/")+path, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the answer: %w", path, err)
	}
	if len(body) > maxBody {
		return nil, fmt.Errorf("%s: answer larger than %d MiB", path, maxBody>>20)
	}
	var out apiResponse
	if err := json.Unmarshal(body, &out); err != nil {
		snippet := string(body[:min(len(body), 200)])
		return nil, fmt.Errorf("%s: HTTP %d, not Prometheus's JSON API (%q): %w", path, resp.StatusCode, snippet, err)
	}
	if out.Status != "success" {
		return nil, fmt.Errorf("%s: HTTP %d: %s: %s", path, resp.StatusCode, out.ErrorType, out.Error)
	}
	return &out, nil
}

func parseValue(v any) (float64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("value %v is not a string", v)
	}
	return strconv.ParseFloat(s, 64)
}

func parseTime(v any) (float64, error) {
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("timestamp %v is not a number", v)
	}
	return f, nil
}

// query runs an instant query at t.
func (c *client) query(ctx context.Context, expr string, t time.Time) ([]sample, error) {
	form := url.Values{"query": {expr}, "time": {strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)}}
	resp, err := c.do(ctx, "/api/v1/query", form)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	if resp.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: result type %q, not vector", expr, resp.Data.ResultType)
	}
	out := make([]sample, 0, len(resp.Data.Result))
	for _, raw := range resp.Data.Result {
		var it vectorItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, fmt.Errorf("query %s: %w", expr, err)
		}
		v, err := parseValue(it.Value[1])
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", expr, err)
		}
		out = append(out, sample{it.Metric, v})
	}
	return out, nil
}

// queryRange runs a range query.
func (c *client) queryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) ([]rangeSeries, error) {
	form := url.Values{"query": {expr},
		"start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(end.Unix(), 10)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	resp, err := c.do(ctx, "/api/v1/query_range", form)
	if err != nil {
		return nil, fmt.Errorf("query_range %s: %w", expr, err)
	}
	if resp.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("query_range %s: result type %q, not matrix", expr, resp.Data.ResultType)
	}
	out := make([]rangeSeries, 0, len(resp.Data.Result))
	for _, raw := range resp.Data.Result {
		var it matrixItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, fmt.Errorf("query_range %s: %w", expr, err)
		}
		rs := rangeSeries{labels: it.Metric, points: make([][2]float64, 0, len(it.Values))}
		for _, p := range it.Values {
			t, err := parseTime(p[0])
			if err != nil {
				return nil, err
			}
			v, err := parseValue(p[1])
			if err != nil {
				return nil, err
			}
			rs.points = append(rs.points, [2]float64{t, v})
		}
		out = append(out, rs)
	}
	return out, nil
}
