package e2etest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// CloudWatchLogs is the CloudWatch Logs API on loopback, for the built
// binary's cloudwatch_emf exporter (set its `endpoint:` to URL and give the
// collector static credentials with CloudWatchEnv). It speaks the service's
// JSON 1.1 protocol (POST /, X-Amz-Target Logs_20140328.<Operation>,
// application/x-amz-json-1.1, errors as {"__type", "message"}) for
// CreateLogGroup, CreateLogStream, PutRetentionPolicy and PutLogEvents, and
// can be taken down (every call answers 503 ServiceUnavailableException)
// and brought back. Requests that break the protocol or PutLogEvents'
// limits are listed in Violations.
//
// The exporter's own package has a stricter fake (EMF validation, STS);
// this one is for end-to-end and load runs, where the collector is a child
// process and only the wire is shared.
type CloudWatchLogs struct {
	URL    string
	Region string

	srv  *httptest.Server
	keep bool

	mu             sync.Mutex
	down           bool
	streams        map[string]map[string]bool
	calls          map[string]int
	accepted       []CWEvent
	refused        []CWEvent
	acceptedEvents int64
	acceptedBytes  int64
	refusedCalls   int
	violations     []string
}

// CWEvent is one log event of a PutLogEvents call.
type CWEvent struct {
	Group, Stream string
	Timestamp     int64
	Message       string
	// EMF is set when the call carried x-amzn-logs-format: json/emf.
	EMF bool
}

// StartCloudWatchLogs starts the fake for region. With keep, every event is
// stored, and so are the events of calls refused during an outage (so a
// test can tell that data reached the exporter's queue); without it only
// counts are kept, for load runs.
func StartCloudWatchLogs(t testing.TB, region string, keep bool) *CloudWatchLogs {
	t.Helper()
	c := &CloudWatchLogs{
		Region:  region,
		keep:    keep,
		streams: map[string]map[string]bool{},
		calls:   map[string]int{},
	}
	c.srv = httptest.NewServer(http.HandlerFunc(c.handle))
	c.URL = c.srv.URL
	t.Cleanup(c.srv.Close)
	return c
}

// CloudWatchEnv is the environment that gives the AWS SDK in the collector
// static test credentials and the fake's region, and keeps it from reading
// the machine's own AWS configuration.
func (c *CloudWatchLogs) CloudWatchEnv() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=AKIAE2ETESTEXAMPLE00",
		"AWS_SECRET_ACCESS_KEY=e2etestSecretKeyNotARealOne0000000000000",
		"AWS_SESSION_TOKEN=",
		"AWS_REGION=" + c.Region,
		"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// SetDown starts (true) or ends (false) an outage.
func (c *CloudWatchLogs) SetDown(down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = down
}

// Events returns the stored events (keep only).
func (c *CloudWatchLogs) Events() []CWEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]CWEvent(nil), c.accepted...)
}

// Refused returns the events of PutLogEvents calls refused during an
// outage (keep only).
func (c *CloudWatchLogs) Refused() []CWEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]CWEvent(nil), c.refused...)
}

// Accepted returns how many events and message bytes were stored.
func (c *CloudWatchLogs) Accepted() (events, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.acceptedEvents, c.acceptedBytes
}

// RefusedCalls is how many calls the outage refused.
func (c *CloudWatchLogs) RefusedCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refusedCalls
}

// Calls counts requests per operation, refused ones included.
func (c *CloudWatchLogs) Calls(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[op]
}

// Violations lists every request that broke the protocol or a limit.
func (c *CloudWatchLogs) Violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.violations...)
}

var sigV4RE = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=[^/]+/\d{8}/([^/]+)/([^/]+)/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$`)

type putLogEventsInput struct {
	LogGroupName  string `json:"logGroupName"`
	LogStreamName string `json:"logStreamName"`
	LogEvents     []struct {
		Timestamp *int64  `json:"timestamp"`
		Message   *string `json:"message"`
	} `json:"logEvents"`
}

func (c *CloudWatchLogs) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "Logs_20140328.")
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/" || !ok {
		c.violate("unexpected request %s %s X-Amz-Target=%q", r.Method, r.URL.Path, r.Header.Get("X-Amz-Target"))
		cwError(w, 400, "UnknownOperationException", "")
		return
	}
	c.calls[op]++
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		c.violate("%s: Content-Type %q, want application/x-amz-json-1.1", op, ct)
	}
	if m := sigV4RE.FindStringSubmatch(r.Header.Get("Authorization")); m == nil {
		c.violate("%s: Authorization is not SigV4: %q", op, r.Header.Get("Authorization"))
	} else if m[1] != c.Region || m[2] != "logs" {
		c.violate("%s: signed for region %q service %q, want %q and logs", op, m[1], m[2], c.Region)
	}
	if c.down {
		c.refusedCalls++
		if op == "PutLogEvents" && c.keep {
			var in putLogEventsInput
			if json.Unmarshal(body, &in) == nil {
				c.refused = append(c.refused, events(in, r)...)
			}
		}
		cwError(w, 503, "ServiceUnavailableException", "The service is unavailable. Please try again later.")
		return
	}
	switch op {
	case "CreateLogGroup":
		var in struct{ LogGroupName string }
		if !c.decode(w, op, body, &in) {
			return
		}
		if _, ok := c.streams[in.LogGroupName]; ok {
			cwError(w, 400, "ResourceAlreadyExistsException", "The specified log group already exists")
			return
		}
		c.streams[in.LogGroupName] = map[string]bool{}
		cwJSON(w, map[string]any{})
	case "CreateLogStream":
		var in struct{ LogGroupName, LogStreamName string }
		if !c.decode(w, op, body, &in) {
			return
		}
		g, ok := c.streams[in.LogGroupName]
		switch {
		case !ok:
			cwError(w, 400, "ResourceNotFoundException", "The specified log group does not exist.")
		case g[in.LogStreamName]:
			cwError(w, 400, "ResourceAlreadyExistsException", "The specified log stream already exists")
		default:
			g[in.LogStreamName] = true
			cwJSON(w, map[string]any{})
		}
	case "PutRetentionPolicy":
		var in struct{ LogGroupName string }
		if !c.decode(w, op, body, &in) {
			return
		}
		if _, ok := c.streams[in.LogGroupName]; !ok {
			cwError(w, 400, "ResourceNotFoundException", "The specified log group does not exist.")
			return
		}
		cwJSON(w, map[string]any{})
	case "PutLogEvents":
		var in putLogEventsInput
		if !c.decode(w, op, body, &in) {
			return
		}
		if g, ok := c.streams[in.LogGroupName]; !ok || !g[in.LogStreamName] {
			cwError(w, 400, "ResourceNotFoundException", "The specified log stream does not exist.")
			return
		}
		c.checkBatch(in)
		evs := events(in, r)
		c.acceptedEvents += int64(len(evs))
		for _, e := range evs {
			c.acceptedBytes += int64(len(e.Message))
		}
		if c.keep {
			c.accepted = append(c.accepted, evs...)
		}
		cwJSON(w, map[string]any{"nextSequenceToken": "49039859565436000000000000000000000000000000000000000000"})
	default:
		c.violate("unsupported operation %s", op)
		cwError(w, 400, "UnknownOperationException", "")
	}
}

// checkBatch applies PutLogEvents' limits: 1 to 10,000 events, 1 MiB
// counting 26 bytes per event, in chronological order.
func (c *CloudWatchLogs) checkBatch(in putLogEventsInput) {
	where := "PutLogEvents " + in.LogGroupName + "/" + in.LogStreamName
	if n := len(in.LogEvents); n == 0 || n > 10_000 {
		c.violate("%s: %d events", where, n)
	}
	size, prev := 0, int64(0)
	for i, e := range in.LogEvents {
		if e.Timestamp == nil || e.Message == nil {
			c.violate("%s: event %d lacks timestamp or message", where, i)
			continue
		}
		size += len(*e.Message) + 26
		if i > 0 && *e.Timestamp < prev {
			c.violate("%s: event %d is out of chronological order", where, i)
		}
		prev = *e.Timestamp
	}
	if size > 1_048_576 {
		c.violate("%s: %d bytes", where, size)
	}
}

func events(in putLogEventsInput, r *http.Request) []CWEvent {
	emf := r.Header.Get("x-amzn-logs-format") == "json/emf"
	out := make([]CWEvent, 0, len(in.LogEvents))
	for _, e := range in.LogEvents {
		if e.Timestamp == nil || e.Message == nil {
			continue
		}
		out = append(out, CWEvent{Group: in.LogGroupName, Stream: in.LogStreamName, Timestamp: *e.Timestamp, Message: *e.Message, EMF: emf})
	}
	return out
}

func (c *CloudWatchLogs) decode(w http.ResponseWriter, op string, body []byte, v any) bool {
	if err := json.Unmarshal(body, v); err != nil {
		c.violate("%s: body is not the expected JSON: %v", op, err)
		cwError(w, 400, "SerializationException", err.Error())
		return false
	}
	return true
}

func (c *CloudWatchLogs) violate(format string, a ...any) {
	if len(c.violations) < 100 {
		c.violations = append(c.violations, fmt.Sprintf(format, a...))
	}
}

func cwError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", "00000000-0000-0000-0000-000000000000")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"__type": typ, "message": msg})
	_, _ = w.Write(b)
}

func cwJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", "00000000-0000-0000-0000-000000000000")
	b, _ := json.Marshal(v)
	_, _ = w.Write(b)
}

// EMFEvent is an EMF log event, decoded.
type EMFEvent struct {
	// Metrics are the metric names the event's directives declare, each
	// once.
	Metrics []string
	// Fields is the whole event (dimensions, attributes, metric values).
	Fields map[string]any
}

// ParseEMF decodes one EMF event.
func ParseEMF(message string) (EMFEvent, error) {
	var ev EMFEvent
	if err := json.Unmarshal([]byte(message), &ev.Fields); err != nil {
		return ev, err
	}
	var aws struct {
		CloudWatchMetrics []struct {
			Metrics []struct{ Name string }
		}
	}
	raw, _ := json.Marshal(ev.Fields["_aws"])
	if err := json.Unmarshal(raw, &aws); err != nil || len(aws.CloudWatchMetrics) == 0 {
		return ev, fmt.Errorf("no _aws.CloudWatchMetrics directive in %.200s", message)
	}
	seen := map[string]bool{}
	for _, d := range aws.CloudWatchMetrics {
		for _, m := range d.Metrics {
			if !seen[m.Name] {
				seen[m.Name] = true
				ev.Metrics = append(ev.Metrics, m.Name)
			}
		}
	}
	return ev, nil
}
