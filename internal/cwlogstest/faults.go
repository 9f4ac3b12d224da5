package cwlogstest

import (
	"encoding/json"
	"net/http"
)

// Fault is an injected failure.
type Fault struct {
	Status  int    // HTTP status
	Type    string // __type of the error body; empty for a bare 5xx
	Message string
}

// Throttling is CloudWatch's answer when the account's PutLogEvents quota is
// exceeded.
var Throttling = Fault{Status: 400, Type: "ThrottlingException", Message: "Rate exceeded"}

// Unavailable is a 503 ServiceUnavailableException.
var Unavailable = Fault{Status: 503, Type: "ServiceUnavailableException", Message: "The service is unavailable. Please try again later."}

// InternalError is a bare 500.
var InternalError = Fault{Status: 500, Type: "InternalFailure", Message: "We encountered an internal error. Please try again."}

// Inject queues faults for an operation ("PutLogEvents", …); each request
// to it consumes one.
func (s *Server) Inject(op string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[op] = append(s.faults[op], faults...)
}

// SetDown makes every request fail with f until Up is called: an outage.
func (s *Server) SetDown(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = &f
}

// Up ends an outage.
func (s *Server) Up() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = nil
}

// fault is the failure the next request to op gets, if any: the outage
// first, then the queue Inject filled.
func (s *Server) fault(op string) (Fault, bool) {
	if s.down != nil {
		return *s.down, true
	}
	if q := s.faults[op]; len(q) > 0 {
		s.faults[op] = q[1:]
		return q[0], true
	}
	return Fault{}, false
}

// refuse answers a request with f. A refused PutLogEvents keeps its events
// (see Refused): they prove the data reached the exporter even though
// CloudWatch never stored it. Nothing is checked, as CloudWatch would not
// look at a request it refuses; the retry that succeeds is checked.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, op string, body []byte, f Fault) {
	s.refusedCalls++
	if op == "PutLogEvents" && !s.countOnly {
		var in putLogEventsInput
		if json.Unmarshal(body, &in) == nil {
			s.refused = append(s.refused, in.events(r)...)
		}
	}
	writeError(w, f)
}
