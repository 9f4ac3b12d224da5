// Package cwlogstest is a CloudWatch Logs API server on loopback for tests.
// It speaks the real JSON 1.1 protocol (POST /, X-Amz-Target
// Logs_20140328.<Operation>, Content-Type application/x-amz-json-1.1, errors
// as {"__type": …, "message": …}) for PutLogEvents, CreateLogGroup,
// CreateLogStream and PutRetentionPolicy, answers STS AssumeRole (query
// protocol, XML) so role assumption can be exercised, and can be told to
// throttle, fail with 5xx or go down altogether.
//
// It checks every request the way CloudWatch would and more: every batch
// against the PutLogEvents limits (events, bytes counting 26 per event,
// chronological order, span), every EMF event against the specification
// (with emfvalidate), every non-EMF event for being a JSON object. What it
// finds is in Violations; tests assert it is empty.
package cwlogstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/otelcol-accel/otelcol-accel/internal/emfvalidate"
)

// Limits of PutLogEvents.
const (
	maxBatchEvents   = 10_000
	maxBatchBytes    = 1_048_576
	perEventOverhead = 26
	maxSpan          = 24 * time.Hour
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

// Event is a log event as stored.
type Event struct {
	Timestamp int64
	Message   string
	EMF       bool
}

// Server is the fake.
type Server struct {
	*httptest.Server
	// Region the requests must be signed for.
	Region string

	mu         sync.Mutex
	groups     map[string]*logGroup
	faults     map[string][]Fault
	down       *Fault
	violations []string
	calls      map[string]int
	accessKeys map[string]int
	assumed    []string
}

type logGroup struct {
	retention int32
	streams   map[string][]Event
}

// New starts a server on 127.0.0.1 for region.
func New(region string) *Server {
	s := &Server{
		Region:     region,
		groups:     map[string]*logGroup{},
		faults:     map[string][]Fault{},
		calls:      map[string]int{},
		accessKeys: map[string]int{},
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

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

// CreateGroup makes a log group exist, as if created beforehand.
func (s *Server) CreateGroup(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[name] = &logGroup{streams: map[string][]Event{}}
}

// Events returns the events stored in a stream.
func (s *Server) Events(group, stream string) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[group]
	if !ok {
		return nil
	}
	return append([]Event(nil), g.streams[stream]...)
}

// AllEvents returns every stored event, keyed "group|stream".
func (s *Server) AllEvents() map[string][]Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]Event{}
	for gn, g := range s.groups {
		for sn, evs := range g.streams {
			out[gn+"|"+sn] = append([]Event(nil), evs...)
		}
	}
	return out
}

// Retention returns a group's retention in days (0: none set) and whether
// the group exists.
func (s *Server) Retention(group string) (int32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[group]
	if !ok {
		return 0, false
	}
	return g.retention, true
}

// Violations lists every rule a request broke.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
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

func (s *Server) violate(format string, a ...any) {
	s.violations = append(s.violations, fmt.Sprintf(format, a...))
}

// AssumedAccessKey is the access key id the fake STS hands out.
const AssumedAccessKey = "ASIAFAKEASSUMEDROLE1"

var credentialRE = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$`)

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	target := r.Header.Get("X-Amz-Target")
	if target == "" && strings.Contains(string(body), "Action=AssumeRole") {
		s.assumeRole(w, body)
		return
	}
	op, ok := strings.CutPrefix(target, "Logs_20140328.")
	if r.Method != http.MethodPost || r.URL.Path != "/" || !ok {
		s.violate("unexpected request %s %s X-Amz-Target=%q", r.Method, r.URL.Path, target)
		writeError(w, Fault{Status: 400, Type: "UnknownOperationException"})
		return
	}
	s.calls[op]++
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		s.violate("%s: Content-Type %q, want application/x-amz-json-1.1", op, ct)
	}
	m := credentialRE.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		s.violate("%s: Authorization header is not SigV4: %q", op, r.Header.Get("Authorization"))
	} else {
		s.accessKeys[m[1]]++
		if m[3] != s.Region || m[4] != "logs" {
			s.violate("%s: signed for region %q service %q, want %q and logs", op, m[3], m[4], s.Region)
		}
	}
	if s.down != nil {
		writeError(w, *s.down)
		return
	}
	if q := s.faults[op]; len(q) > 0 {
		s.faults[op] = q[1:]
		writeError(w, q[0])
		return
	}
	switch op {
	case "PutLogEvents":
		s.putLogEvents(w, r, body)
	case "CreateLogGroup":
		var in struct{ LogGroupName string }
		if !s.decode(w, op, body, &in) {
			return
		}
		if _, ok := s.groups[in.LogGroupName]; ok {
			writeError(w, Fault{Status: 400, Type: "ResourceAlreadyExistsException", Message: "The specified log group already exists"})
			return
		}
		if !validGroupName(in.LogGroupName) {
			writeError(w, Fault{Status: 400, Type: "InvalidParameterException", Message: "1 validation error detected: Value at 'logGroupName' failed to satisfy constraint"})
			return
		}
		s.groups[in.LogGroupName] = &logGroup{streams: map[string][]Event{}}
		writeJSON(w, map[string]any{})
	case "CreateLogStream":
		var in struct{ LogGroupName, LogStreamName string }
		if !s.decode(w, op, body, &in) {
			return
		}
		g, ok := s.groups[in.LogGroupName]
		if !ok {
			writeError(w, Fault{Status: 400, Type: "ResourceNotFoundException", Message: "The specified log group does not exist."})
			return
		}
		if _, ok := g.streams[in.LogStreamName]; ok {
			writeError(w, Fault{Status: 400, Type: "ResourceAlreadyExistsException", Message: "The specified log stream already exists"})
			return
		}
		if in.LogStreamName == "" || len(in.LogStreamName) > 512 || strings.ContainsAny(in.LogStreamName, ":*") {
			writeError(w, Fault{Status: 400, Type: "InvalidParameterException", Message: "1 validation error detected: Value at 'logStreamName' failed to satisfy constraint"})
			return
		}
		g.streams[in.LogStreamName] = []Event{}
		writeJSON(w, map[string]any{})
	case "PutRetentionPolicy":
		var in struct {
			LogGroupName    string
			RetentionInDays int32
		}
		if !s.decode(w, op, body, &in) {
			return
		}
		g, ok := s.groups[in.LogGroupName]
		if !ok {
			writeError(w, Fault{Status: 400, Type: "ResourceNotFoundException", Message: "The specified log group does not exist."})
			return
		}
		g.retention = in.RetentionInDays
		writeJSON(w, map[string]any{})
	default:
		s.violate("unsupported operation %s", op)
		writeError(w, Fault{Status: 400, Type: "UnknownOperationException"})
	}
}

var groupNameRE = regexp.MustCompile(`^[\.\-_/#A-Za-z0-9]{1,512}$`)

func validGroupName(n string) bool { return groupNameRE.MatchString(n) }

func (s *Server) decode(w http.ResponseWriter, op string, body []byte, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		s.violate("%s: body is not the expected JSON: %v", op, err)
		writeError(w, Fault{Status: 400, Type: "SerializationException", Message: err.Error()})
		return false
	}
	return true
}

func (s *Server) putLogEvents(w http.ResponseWriter, r *http.Request, body []byte) {
	var in struct {
		LogGroupName  string `json:"logGroupName"`
		LogStreamName string `json:"logStreamName"`
		LogEvents     []struct {
			Timestamp *int64  `json:"timestamp"`
			Message   *string `json:"message"`
		} `json:"logEvents"`
	}
	if !s.decode(w, "PutLogEvents", body, &in) {
		return
	}
	g, ok := s.groups[in.LogGroupName]
	if !ok {
		writeError(w, Fault{Status: 400, Type: "ResourceNotFoundException", Message: "The specified log group does not exist."})
		return
	}
	if _, ok := g.streams[in.LogStreamName]; !ok {
		writeError(w, Fault{Status: 400, Type: "ResourceNotFoundException", Message: "The specified log stream does not exist."})
		return
	}
	emf := r.Header.Get("x-amzn-logs-format") == "json/emf"
	where := fmt.Sprintf("PutLogEvents %s/%s", in.LogGroupName, in.LogStreamName)
	if len(in.LogEvents) == 0 || len(in.LogEvents) > maxBatchEvents {
		s.violate("%s: %d events (want 1 to %d)", where, len(in.LogEvents), maxBatchEvents)
	}
	size := 0
	var first, prev int64
	for i, e := range in.LogEvents {
		if e.Timestamp == nil || e.Message == nil {
			s.violate("%s: event %d lacks timestamp or message", where, i)
			continue
		}
		msg, ts := *e.Message, *e.Timestamp
		size += len(msg) + perEventOverhead
		if i == 0 {
			first = ts
		} else if ts < prev {
			s.violate("%s: event %d at %d is before event %d at %d: not chronological", where, i, ts, i-1, prev)
		}
		prev = ts
		if !utf8.ValidString(msg) {
			s.violate("%s: event %d is not valid UTF-8", where, i)
		}
		if emf {
			if _, err := emfvalidate.Event([]byte(msg), emfvalidate.MaxEventBytes); err != nil {
				s.violate("%s: event %d is not valid EMF: %v\n%s", where, i, err, abbreviate(msg))
			}
		} else {
			var obj map[string]any
			if err := json.Unmarshal([]byte(msg), &obj); err != nil {
				s.violate("%s: event %d is not a JSON object: %v", where, i, err)
			}
		}
		g.streams[in.LogStreamName] = append(g.streams[in.LogStreamName], Event{Timestamp: ts, Message: msg, EMF: emf})
	}
	if size > maxBatchBytes {
		s.violate("%s: batch is %d bytes counting %d per event, more than %d", where, size, perEventOverhead, maxBatchBytes)
	}
	if time.Duration(prev-first)*time.Millisecond >= maxSpan {
		s.violate("%s: batch spans %v, not less than 24h", where, time.Duration(prev-first)*time.Millisecond)
	}
	writeJSON(w, map[string]any{"nextSequenceToken": "49039859565436000000000000000000000000000000000000000000"})
}

func (s *Server) assumeRole(w http.ResponseWriter, body []byte) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	role := form.Get("RoleArn")
	s.assumed = append(s.assumed, role)
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <Credentials>
      <AccessKeyId>%s</AccessKeyId>
      <SecretAccessKey>fakeSecretFromAssumedRole</SecretAccessKey>
      <SessionToken>fakeSessionToken</SessionToken>
      <Expiration>%s</Expiration>
    </Credentials>
    <AssumedRoleUser>
      <Arn>%s/%s</Arn>
      <AssumedRoleId>AROAFAKE:%s</AssumedRoleId>
    </AssumedRoleUser>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
</AssumeRoleResponse>`, AssumedAccessKey, time.Now().Add(time.Hour).UTC().Format(time.RFC3339), role, form.Get("RoleSessionName"), form.Get("RoleSessionName"))
}

func writeError(w http.ResponseWriter, f Fault) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", "00000000-0000-0000-0000-000000000000")
	w.WriteHeader(f.Status)
	b, _ := json.Marshal(map[string]string{"__type": f.Type, "message": f.Message})
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", "00000000-0000-0000-0000-000000000000")
	b, _ := json.Marshal(v)
	_, _ = w.Write(b)
}

func abbreviate(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}
