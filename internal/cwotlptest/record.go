package cwotlptest

import "go.opentelemetry.io/collector/pdata/pmetric"

// Metrics returns the metrics of every accepted request, in arrival order.
func (s *Server) Metrics() []pmetric.Metrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]pmetric.Metrics(nil), s.metrics...)
}

// Logs returns every accepted logs request, in arrival order.
func (s *Server) Logs() []LogsRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]LogsRequest(nil), s.logs...)
}

// RefusedMetrics returns the metrics of the requests answered with the
// outage's status: well-formed and signed, but not taken.
func (s *Server) RefusedMetrics() []pmetric.Metrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]pmetric.Metrics(nil), s.refusedMetrics...)
}

// RefusedLogs returns the logs requests answered with the outage's status.
func (s *Server) RefusedLogs() []LogsRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]LogsRequest(nil), s.refusedLogs...)
}

// RefusedCalls counts the requests answered with the outage's status.
func (s *Server) RefusedCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refusedCalls
}

// Violations returns what CloudWatch would have refused, or what broke a
// limit our configs promise to keep, one line each.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// Accepted returns the data points and the bytes on the wire (compressed,
// when they were) of the metrics requests accepted so far.
func (s *Server) Accepted() (points, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acceptedPoints, s.acceptedBytes
}
