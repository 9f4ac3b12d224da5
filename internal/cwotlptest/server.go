// Package cwotlptest is CloudWatch's OTLP endpoints on loopback for tests:
// the metrics endpoint (https://monitoring.<region>.amazonaws.com/v1/metrics,
// SigV4 service "monitoring") and the logs endpoint
// (https://logs.<region>.amazonaws.com/v1/logs, SigV4 service "logs", the
// log group and stream in the x-aws-log-group and x-aws-log-stream
// headers), on one server told apart by path. cwlogstest is its sibling for
// the CloudWatch Logs API that the EMF path uses.
//
// Every request is checked the way CloudWatch would: its Signature Version
// 4 is verified with the real signer (VerifySigV4) against the static test
// credentials, for the endpoint's service and the server's region; the
// body, plain or gzip, is decoded as an OTLP protobuf or JSON export
// request with pdata; the logs endpoint wants its two headers. A request
// that fails is refused as CloudWatch refuses it (403, 400, 415), and what
// was wrong is in Violations, which tests assert is empty. Limits that our
// configs promise to keep (docs/cloudwatch.md) are checked there too.
//
// The server can be told to be unavailable (SetDown): it then answers
// every request with that status and Retry-After, as CloudWatch does when
// it throttles or fails, and keeps what it refused apart (Refused*).
package cwotlptest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Endpoint paths and the SigV4 service each is signed for.
const (
	MetricsPath    = "/v1/metrics"
	LogsPath       = "/v1/logs"
	MetricsService = "monitoring"
	LogsService    = "logs"
)

// Headers the logs endpoint reads the destination from.
const (
	LogGroupHeader  = "x-aws-log-group"
	LogStreamHeader = "x-aws-log-stream"
)

// maxBody bounds what the server reads of one request.
const maxBody = 64 << 20

// Server is the fake.
type Server struct {
	*httptest.Server
	// Region the requests must be signed for.
	Region string
	// Credentials the requests must be signed with.
	Credentials Credentials

	mu             sync.Mutex
	down           int // the status answered while down; 0 when up
	metrics        []pmetric.Metrics
	logs           []LogsRequest
	refusedMetrics []pmetric.Metrics
	refusedLogs    []LogsRequest
	refusedCalls   int
	violations     []string

	// countOnly: see CountOnly.
	countOnly      bool
	acceptedPoints int64
	acceptedBytes  int64
}

// Option changes how New sets the server up.
type Option func(*Server)

// CountOnly makes the server count the data points and body bytes it
// accepts (Accepted) instead of keeping every request: a load run sends more
// than memory holds. Every request is still verified, decoded and checked.
func CountOnly() Option {
	return func(s *Server) { s.countOnly = true }
}

// LogsRequest is what one request to the logs endpoint carried.
type LogsRequest struct {
	Group, Stream string
	Logs          plog.Logs
}

// New starts a server on 127.0.0.1 that takes requests signed with creds
// for region.
func New(region string, creds Credentials, opts ...Option) *Server {
	s := &Server{Region: region, Credentials: creds}
	for _, o := range opts {
		o(s)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// SetDown makes the server answer every request with status (503 for an
// outage, 429 for throttling) until Up.
func (s *Server) SetDown(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = status
}

// Up ends an outage.
func (s *Server) Up() { s.SetDown(0) }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	var service string
	switch r.URL.Path {
	case MetricsPath:
		service = MetricsService
	case LogsPath:
		service = LogsService
	default:
		s.refuse(w, http.StatusNotFound, "%s %s: no such endpoint", r.Method, r.URL.Path)
		return
	}
	if r.Method != http.MethodPost {
		s.refuse(w, http.StatusMethodNotAllowed, "%s %s: the endpoint takes POST", r.Method, r.URL.Path)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		s.refuse(w, http.StatusBadRequest, "%s: reading the body: %v", r.URL.Path, err)
		return
	}
	if err := VerifySigV4(r, body, s.Credentials, s.Region, service, time.Now()); err != nil {
		s.refuse(w, http.StatusForbidden, "%s: %v", r.URL.Path, err)
		return
	}
	raw, status, err := decodeBody(r, body)
	if err != nil {
		s.refuse(w, status, "%s: %v", r.URL.Path, err)
		return
	}
	if service == MetricsService {
		s.takeMetrics(w, r, raw, len(body))
	} else {
		s.takeLogs(w, r, raw)
	}
}

func (s *Server) takeMetrics(w http.ResponseWriter, r *http.Request, raw []byte, wire int) {
	md, err := unmarshalMetrics(r, raw)
	if err != nil {
		s.refuse(w, http.StatusBadRequest, "%s: %v", MetricsPath, err)
		return
	}
	for _, v := range checkMetrics(md) {
		s.violate("%s: %s", MetricsPath, v)
	}
	s.mu.Lock()
	if s.down != 0 {
		s.refusedMetrics = append(s.refusedMetrics, md)
		s.refusedCalls++
		s.mu.Unlock()
		unavailable(w, s.down)
		return
	}
	s.acceptedPoints += int64(md.DataPointCount())
	s.acceptedBytes += int64(wire)
	if !s.countOnly {
		s.metrics = append(s.metrics, md)
	}
	s.mu.Unlock()
	respondMetrics(w, r)
}

func (s *Server) takeLogs(w http.ResponseWriter, r *http.Request, raw []byte) {
	group, stream := r.Header.Get(LogGroupHeader), r.Header.Get(LogStreamHeader)
	if group == "" || stream == "" {
		s.refuse(w, http.StatusBadRequest, "%s: the log group and stream must be in the %s and %s headers (got %q, %q)",
			LogsPath, LogGroupHeader, LogStreamHeader, group, stream)
		return
	}
	if len(raw) > maxLogsRequestBytes {
		s.refuse(w, http.StatusRequestEntityTooLarge, "%s: %d bytes uncompressed, over the endpoint's %d", LogsPath, len(raw), maxLogsRequestBytes)
		return
	}
	ld, err := unmarshalLogs(r, raw)
	if err != nil {
		s.refuse(w, http.StatusBadRequest, "%s: %v", LogsPath, err)
		return
	}
	req := LogsRequest{Group: group, Stream: stream, Logs: ld}
	s.mu.Lock()
	if s.down != 0 {
		s.refusedLogs = append(s.refusedLogs, req)
		s.refusedCalls++
		s.mu.Unlock()
		unavailable(w, s.down)
		return
	}
	s.logs = append(s.logs, req)
	s.mu.Unlock()
	respondLogs(w, r)
}

// refuse answers a request CloudWatch would refuse and records why.
func (s *Server) refuse(w http.ResponseWriter, status int, format string, args ...any) {
	msg := s.violate(format, args...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, "{\"message\":%q}", msg)
}

func (s *Server) violate(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	// Bounded: a load run breaking a rule on every call would otherwise
	// grow the list without end.
	if len(s.violations) < 100 {
		s.violations = append(s.violations, msg)
	}
	return msg
}

// unavailable answers as CloudWatch does while it throttles or fails: the
// status and when to try again.
func unavailable(w http.ResponseWriter, status int) {
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, "{\"message\":%q}", http.StatusText(status))
}
