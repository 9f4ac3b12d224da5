package inferencereceiver // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver"

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/cumulative"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/discovery"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// target is one inference server and what the receiver remembers of it
// between scrapes.
type target struct {
	id        string
	url       string
	server    string // configured kind, or auto
	model     string
	operation string
	timeout   time.Duration
	address   string
	port      int64
	pod       *discovery.Pod

	detected string // kind found by auto-detection
	tracker  *cumulative.Tracker
	// body is the last scrape's response body and page its parse, both
	// reused by the next scrape. The page's text is body's bytes, so no
	// string of it may outlive the scrape: the emitter copies the model
	// and attribute values and the exemplars' filtered labels (the only
	// ones that reach pdata), the tracker its keys, and errors are
	// formatted copies.
	body []byte
	page promscrape.Page
	// servedFirst: the pod's first finished request was recorded
	// (firstrequest.go).
	servedFirst bool
}

func newTarget(id string, u *url.URL, server, model, operation string, timeout time.Duration, pod *discovery.Pod) *target {
	port := int64(80)
	if u.Scheme == "https" {
		port = 443
	}
	if p, err := strconv.ParseInt(u.Port(), 10, 64); err == nil {
		port = p
	}
	if operation == "" {
		operation = defaultOperation
	}
	return &target{
		id:        id,
		url:       u.String(),
		server:    server,
		model:     model,
		operation: operation,
		timeout:   timeout,
		address:   u.Hostname(),
		port:      port,
		pod:       pod,
		tracker:   cumulative.New(),
	}
}

// describe names the target in logs and status: its URL, and its pod.
func (t *target) describe() string {
	if t.pod != nil {
		return t.url + " (pod " + t.pod.Namespace + "/" + t.pod.Name + ")"
	}
	return t.url
}

// scrapeResult is what one target's scrape produced.
type scrapeResult struct {
	kind    string
	outputs []cumulative.Output
	// err is set when the target gave nothing usable: the target is down.
	err error
	// warnings describe input that was skipped while the rest was kept.
	warnings []string
	points   int
}

// fetchError is a failed scrape, with the reason in words.
type fetchError struct{ reason string }

func (e *fetchError) Error() string { return e.reason }

func failf(format string, args ...any) *fetchError {
	return &fetchError{reason: fmt.Sprintf(format, args...)}
}

// fetch gets the target's exposition text and its format.
func (t *target) fetch(ctx context.Context, client *promscrape.Client) (promscrape.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	resp, body, err := client.FetchReusing(ctx, t.url, t.body)
	t.body = body
	text := resp.Text
	var (
		status   *promscrape.StatusError
		tooLarge *promscrape.BodyTooLargeError
	)
	switch {
	case err == nil:
		return resp, nil
	case errors.As(err, &status):
		return promscrape.Response{}, failf("answered HTTP %s instead of metrics", status.Status)
	case errors.As(err, &tooLarge):
		return promscrape.Response{}, failf("response larger than max_response_bytes (%d)", tooLarge.Limit)
	case text != "":
		return promscrape.Response{}, failf("response cut off after %d bytes: %s", len(text), describeNetError(err, t.timeout))
	}
	return promscrape.Response{}, failf("unreachable: %s", describeNetError(err, t.timeout))
}

func describeNetError(err error, timeout time.Duration) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Sprintf("no answer within %s (scrape_timeout)", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Op + ": " + oe.Err.Error()
	}
	return err.Error()
}

// process reads one scrape's page and folds it into the target's series.
// An OpenMetrics page's exemplars are read; one that cannot be is reported
// and its sample kept.
func (t *target) process(page promscrape.Response, now time.Time) scrapeResult {
	var res scrapeResult
	promscrape.ParseOptions{OpenMetrics: page.OpenMetrics()}.ParseInto(&t.page, page.Text)
	doc := &t.page
	for _, e := range doc.Errors.First {
		res.warnings = append(res.warnings, e.Error())
	}
	if n := doc.Errors.Dropped(); n > 0 {
		res.warnings = append(res.warnings, fmt.Sprintf("… and %d more unreadable lines", n))
	}
	for _, e := range doc.ExemplarErrors.First {
		res.warnings = append(res.warnings, "exemplar dropped, sample kept: "+e.Error())
	}
	if n := doc.ExemplarErrors.Dropped(); n > 0 {
		res.warnings = append(res.warnings, fmt.Sprintf("… and %d more exemplars dropped", n))
	}
	if len(doc.Samples) == 0 {
		reason := fmt.Sprintf("answered without Prometheus metrics (%d lines, no sample readable)", doc.Lines)
		if len(doc.Errors.First) > 0 {
			reason += "; first problem: " + doc.Errors.First[0].Error()
		}
		res.err = failf("%s", reason)
		return res
	}

	kind := t.server
	if kind == ServerAuto {
		if t.detected == "" {
			k, ok := normalize.Detect(doc.Samples)
			if !ok {
				res.err = failf("serves %d samples but none an inference server exposes (vllm:, sglang:, nv_inference_, tgi_ or NIM names); set server: if it is one", len(doc.Samples))
				return res
			}
			t.detected = k
		}
		kind = t.detected
	}
	res.kind = kind

	norm := normalize.NormalizePage(kind, doc, t.model)
	if norm.Matched == 0 {
		if t.server == ServerAuto {
			// The server behind the endpoint changed; detect again
			// next time and start its series afresh.
			t.detected = ""
			t.tracker = cumulative.New()
		}
		res.err = failf("serves %d samples but none of %s's metrics", len(doc.Samples), kind)
		return res
	}
	for _, e := range norm.Errors {
		res.warnings = append(res.warnings, e.Error())
	}
	if norm.ErrorCount > len(norm.Errors) {
		res.warnings = append(res.warnings, fmt.Sprintf("… and %d more series dropped", norm.ErrorCount-len(norm.Errors)))
	}
	for _, e := range norm.ExemplarErrors {
		res.warnings = append(res.warnings, e.Error())
	}
	if norm.ExemplarErrorCount > len(norm.ExemplarErrors) {
		res.warnings = append(res.warnings, fmt.Sprintf("… and %d more exemplars without their trace", norm.ExemplarErrorCount-len(norm.ExemplarErrors)))
	}
	outs, errs := t.tracker.Update(now, norm.Points)
	for _, e := range errs {
		res.warnings = append(res.warnings, e.Error())
	}
	res.outputs = deriveHitRatios(outs, now)
	res.points = len(res.outputs)
	return res
}

func joinWarnings(ws []string, limit int) string {
	if len(ws) > limit {
		ws = append(ws[:limit:limit], fmt.Sprintf("… (%d in all)", len(ws)))
	}
	return strings.Join(ws, "; ")
}
