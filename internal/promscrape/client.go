package promscrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unsafe"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
)

// DefaultMaxBodyBytes bounds a response when ClientOptions say nothing:
// dcgm-exporter's page for 8 GPUs with per-pod series, or a vLLM server's
// with every histogram, is well under a MiB.
const DefaultMaxBodyBytes = 64 << 20

// Accept headers.
const (
	// AcceptText asks for the text format only.
	AcceptText = "text/plain;version=0.0.4"
	// AcceptTextOrOpenMetrics prefers the text format and takes
	// OpenMetrics, whose sample lines Parse and Reader read too.
	AcceptTextOrOpenMetrics = "text/plain;version=0.0.4;q=1,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1"
	// AcceptOpenMetricsOrText prefers OpenMetrics, the format with
	// exemplars, and takes the text format. prometheus_client (vLLM,
	// SGLang) answers OpenMetrics to any Accept naming it, whatever its
	// q; client_golang honours q.
	AcceptOpenMetricsOrText = "application/openmetrics-text;version=1.0.0;q=0.9,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)

// IsOpenMetrics reports whether a Content-Type is OpenMetrics text
// (application/openmetrics-text; version=1.0.0; charset=utf-8): its
// exemplars are read only then (ParseOptions.OpenMetrics).
func IsOpenMetrics(contentType string) bool {
	const om = "application/openmetrics-text"
	ct := strings.TrimLeft(contentType, " \t")
	if len(ct) < len(om) || !strings.EqualFold(ct[:len(om)], om) {
		return false
	}
	rest := strings.TrimLeft(ct[len(om):], " \t")
	return rest == "" || rest[0] == ';'
}

// ClientOptions are what a scrape adds to the user's confighttp settings.
type ClientOptions struct {
	// Accept is the Accept header (default AcceptText).
	Accept string
	// UserAgent is sent unless headers: in the config set one.
	UserAgent string
	// MaxBodyBytes bounds one response (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
}

// Client scrapes /metrics pages over the HTTP client confighttp builds:
// timeouts, TLS, headers, proxy, auth and middleware extensions come from
// the user's configuration; the body bound and the headers of a scrape from
// here. It is safe for concurrent use.
type Client struct {
	http *http.Client
	opts ClientOptions
}

// NewClient builds the client. It fails only on configuration errors (a TLS
// file that cannot be read, an auth extension that is not there), never
// because an endpoint does not answer. host may be nil where no extension
// is configured.
func NewClient(ctx context.Context, cfg *confighttp.ClientConfig, host component.Host, set component.TelemetrySettings, opts ClientOptions) (*Client, error) {
	var extensions map[component.ID]component.Component
	if host != nil {
		extensions = host.GetExtensions()
	}
	hc, err := cfg.ToClient(ctx, extensions, set)
	if err != nil {
		return nil, err
	}
	return NewClientWith(hc, opts), nil
}

// NewClientWith wraps an HTTP client that is already built.
func NewClientWith(hc *http.Client, opts ClientOptions) *Client {
	if opts.Accept == "" {
		opts.Accept = AcceptText
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return &Client{http: hc, opts: opts}
}

// MaxBodyBytes is the bound on one response.
func (c *Client) MaxBodyBytes() int64 { return c.opts.MaxBodyBytes }

// Get requests url and returns its body, which ends with a
// *BodyTooLargeError past MaxBodyBytes. An answer other than 200 is a
// *StatusError. The caller closes the body; Close reads a little of what
// is left so that the connection can be used again.
func (c *Client) Get(ctx context.Context, url string) (io.ReadCloser, error) {
	resp, err := c.get(ctx, url)
	if err != nil {
		return nil, err
	}
	return &body{rc: resp.Body, left: c.opts.MaxBodyBytes, limit: c.opts.MaxBodyBytes}, nil
}

// Fetch requests url and returns its whole body as text. A body that did
// not end well returns what was read with the error: a *BodyTooLargeError
// with the first MaxBodyBytes, or the read error (a connection cut) with
// what came before it; the caller chooses whether to use a part.
func (c *Client) Fetch(ctx context.Context, url string) (string, error) {
	r, _, err := c.fetch(ctx, url, nil)
	return r.Text, err
}

// Response is a page as Fetch reads it, with its format.
type Response struct {
	Text        string
	ContentType string
}

// OpenMetrics reports whether the page was served as OpenMetrics.
func (r Response) OpenMetrics() bool { return IsOpenMetrics(r.ContentType) }

// FetchReusing is Fetch that also returns the Content-Type (for the
// caller to read the page as its format says), reading into buf (grown
// when the page does not fit, allocated when nil), which it returns for
// the next call: a scraper of the same endpoint allocates the body once,
// not per scrape. The Response's Text is
// buf's bytes, so it changes with the next call: the caller must keep no
// string of it (no substring either) past that.
func (c *Client) FetchReusing(ctx context.Context, url string, buf []byte) (Response, []byte, error) {
	return c.fetch(ctx, url, buf)
}

func (c *Client) fetch(ctx context.Context, url string, buf []byte) (Response, []byte, error) {
	resp, err := c.get(ctx, url)
	if err != nil {
		return Response{}, buf, err
	}
	b := &body{rc: resp.Body, left: c.opts.MaxBodyBytes, limit: c.opts.MaxBodyBytes}
	defer b.Close()
	hint := int64(16 << 10)
	if n := resp.ContentLength; n > 0 {
		hint = min(n, c.opts.MaxBodyBytes) + 1 // +1: the read that sees the end
	}
	if int64(cap(buf)) < hint {
		buf = make([]byte, 0, hint)
	}
	buf, err = readInto(b, buf[:0])
	return Response{Text: unsafe.String(unsafe.SliceData(buf), len(buf)), ContentType: resp.Header.Get("Content-Type")}, buf, err
}

// readInto appends r, to its end, to buf.
func readInto(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			// Double: append grows a large slice by a quarter at a time,
			// which for a page of unknown length copies it many times.
			grown := make([]byte, len(buf), 2*cap(buf))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return buf, err
		}
	}
}

func (c *Client) get(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", c.opts.Accept)
	if c.opts.UserAgent != "" {
		req.Header.Set("User-Agent", c.opts.UserAgent)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		drain(resp.Body)
		return nil, &StatusError{Code: resp.StatusCode, Status: resp.Status}
	}
	return resp, nil
}

// CloseIdleConnections closes the connections kept for reuse (at
// shutdown).
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// StatusError is an answer other than 200 OK.
type StatusError struct {
	Code   int
	Status string // "503 Service Unavailable"
}

func (e *StatusError) Error() string { return "answered " + e.Status }

// BodyTooLargeError is a body longer than the client's bound: it is cut
// there, so that a misconfigured endpoint cannot exhaust the collector's
// memory.
type BodyTooLargeError struct{ Limit int64 }

func (e *BodyTooLargeError) Error() string {
	if e.Limit%(1<<20) == 0 {
		return fmt.Sprintf("response larger than %d MiB", e.Limit>>20)
	}
	return fmt.Sprintf("response larger than %d bytes", e.Limit)
}

// body ends with a *BodyTooLargeError rather than silently at its bound,
// so that the cut is reported.
type body struct {
	rc          io.ReadCloser
	left, limit int64
}

func (b *body) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the bound from a longer one.
		var one [1]byte
		for {
			n, err := b.rc.Read(one[:])
			if n > 0 {
				return 0, &BodyTooLargeError{Limit: b.limit}
			}
			if err != nil {
				return 0, err
			}
		}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *body) Close() error {
	drain(b.rc)
	return nil
}

// drain reads a little of an unread body and closes it, so that the
// connection can be used again.
func drain(rc io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(rc, 4<<10))
	_ = rc.Close()
}
