package cwlogstest

import "fmt"

// maxViolations bounds the list: a load run breaking a rule on every call
// would otherwise grow it without end. The count of the rest is kept.
const maxViolations = 100

// record is what the server saw, for the tests to read.
type record struct {
	events         []Event // stored, in arrival order
	refused        []Event
	acceptedEvents int64
	acceptedBytes  int64
	refusedCalls   int
	calls          map[string]int
	accessKeys     map[string]int
	assumed        []string
	violations     []string
	moreViolations int
}

func newRecord() record {
	return record{calls: map[string]int{}, accessKeys: map[string]int{}}
}

func (r *record) violate(format string, a ...any) {
	if len(r.violations) < maxViolations {
		r.violations = append(r.violations, fmt.Sprintf(format, a...))
	} else {
		r.moreViolations++
	}
}

// Events returns the events stored in a stream.
func (s *Server) Events(group, stream string) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Event
	for _, e := range s.events {
		if e.Group == group && e.Stream == stream {
			out = append(out, e)
		}
	}
	return out
}

// AllEvents returns every stored event in the order they arrived.
func (s *Server) AllEvents() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Refused returns the events of PutLogEvents calls answered with a fault
// (injected, or during an outage), in the order they arrived. CountOnly
// keeps none.
func (s *Server) Refused() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.refused...)
}

// Accepted returns how many events, and bytes of their messages, calls that
// succeeded carried; counted even under CountOnly.
func (s *Server) Accepted() (events, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acceptedEvents, s.acceptedBytes
}

// RefusedCalls is how many CloudWatch Logs calls were answered with a fault.
func (s *Server) RefusedCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refusedCalls
}

// Calls counts requests per operation, faults included.
func (s *Server) Calls(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

// AccessKeys counts signed CloudWatch Logs requests per access key id.
func (s *Server) AccessKeys() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.accessKeys {
		out[k] = v
	}
	return out
}

// AssumedRoles lists the role ARNs AssumeRole was called with.
func (s *Server) AssumedRoles() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.assumed...)
}

// Violations lists every rule a request broke (the first 100, then how
// many more).
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.violations...)
	if s.moreViolations > 0 {
		out = append(out, fmt.Sprintf("… and %d more", s.moreViolations))
	}
	return out
}
