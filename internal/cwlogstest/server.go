// Package cwlogstest is a CloudWatch Logs API server on loopback for tests:
// the exporter's own tests and the end-to-end and load runs of the built
// binary share it, so both check the wire against the same rules.
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
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/otelcol-accel/otelcol-accel/internal/cwotlptest"
)

// Server is the fake.
type Server struct {
	*httptest.Server
	// Region the requests must be signed for.
	Region string

	// countOnly: see CountOnly.
	countOnly bool
	// secrets of the access keys whose signatures are verified (see
	// VerifySignatures); nil checks the Authorization header's form only.
	secrets map[string]string

	mu     sync.Mutex
	groups map[string]*logGroup
	faults map[string][]Fault
	down   *Fault
	record
}

type logGroup struct {
	retention int32
	streams   map[string]bool
}

// Option changes how New sets the server up.
type Option func(*Server)

// CountOnly makes the server count accepted events and bytes (Accepted)
// without storing any event, and skip the per-event EMF and JSON checks: a
// load run sends more than memory holds, and the fake shares the machine's
// CPUs with the collector being measured. The batch limits are still
// checked.
func CountOnly() Option {
	return func(s *Server) { s.countOnly = true }
}

// VerifySignatures makes the server check every CloudWatch Logs request's
// Signature Version 4 as AWS does (cwotlptest.VerifySigV4: the real signer
// over the method, path, signed headers and the SHA-256 of the body as it
// arrived) with the secret of accessKeyID or of the credentials its STS
// hands out, and refuse the rest with 403 as CloudWatch does. Without it
// only the header's form, region and service are checked.
func VerifySignatures(accessKeyID, secretAccessKey string) Option {
	return func(s *Server) {
		s.secrets = map[string]string{accessKeyID: secretAccessKey, AssumedAccessKey: assumedSecret}
	}
}

// New starts a server on 127.0.0.1 for region.
func New(region string, opts ...Option) *Server {
	s := &Server{
		Region: region,
		groups: map[string]*logGroup{},
		faults: map[string][]Fault{},
		record: newRecord(),
	}
	for _, o := range opts {
		o(s)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

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
	if !s.signedBy(w, r, op, body, m) {
		return
	}
	if f, ok := s.fault(op); ok {
		s.refuse(w, r, op, body, f)
		return
	}
	switch op {
	case "PutLogEvents":
		s.putLogEvents(w, r, body)
	case "CreateLogGroup":
		s.createLogGroup(w, body)
	case "CreateLogStream":
		s.createLogStream(w, body)
	case "PutRetentionPolicy":
		s.putRetentionPolicy(w, body)
	default:
		s.violate("unsupported operation %s", op)
		writeError(w, Fault{Status: 400, Type: "UnknownOperationException"})
	}
}

// signedBy verifies the request's signature when VerifySignatures is on;
// a request that fails is a violation, answered as CloudWatch answers it.
// m is the Authorization header matched by credentialRE (nil: not SigV4).
func (s *Server) signedBy(w http.ResponseWriter, r *http.Request, op string, body []byte, m []string) bool {
	if s.secrets == nil {
		return true
	}
	var err error
	if m == nil {
		err = fmt.Errorf("no SigV4 Authorization header")
	} else if secret, ok := s.secrets[m[1]]; !ok {
		err = fmt.Errorf("signed with access key %q, which the server does not know", m[1])
	} else {
		err = cwotlptest.VerifySigV4(r, body, cwotlptest.Credentials{AccessKeyID: m[1], SecretAccessKey: secret}, s.Region, "logs", time.Now())
	}
	if err != nil {
		s.violate("%s: %v", op, err)
		writeError(w, Fault{Status: http.StatusForbidden, Type: "InvalidSignatureException", Message: err.Error()})
		return false
	}
	return true
}
