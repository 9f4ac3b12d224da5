package cwlogstest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const auth = "AWS4-HMAC-SHA256 Credential=AKIDTEST/20260301/us-east-1/logs/aws4_request, SignedHeaders=host;x-amz-date, Signature=" +
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func call(t *testing.T, s *Server, op string, body any, emf bool) (int, map[string]string) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/", bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("X-Amz-Target", "Logs_20140328."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("Authorization", auth)
	if emf {
		req.Header.Set("x-amzn-logs-format", "json/emf")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]string{}
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

type ev struct {
	Timestamp int64  `json:"timestamp"`
	Message   string `json:"message"`
}

func put(events ...ev) map[string]any {
	return map[string]any{"logGroupName": "g", "logStreamName": "s", "logEvents": events}
}

const goodEMF = `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"]],"Metrics":[{"Name":"m"}]}]},"D":"x","m":1}`

func TestServerSpeaksTheProtocol(t *testing.T) {
	s := New("us-east-1")
	defer s.Close()
	status, body := call(t, s, "PutLogEvents", put(ev{1, goodEMF}), true)
	assert.Equal(t, 400, status)
	assert.Equal(t, "ResourceNotFoundException", body["__type"])

	status, _ = call(t, s, "CreateLogGroup", map[string]string{"logGroupName": "g"}, false)
	assert.Equal(t, 200, status)
	status, body = call(t, s, "CreateLogGroup", map[string]string{"logGroupName": "g"}, false)
	assert.Equal(t, "ResourceAlreadyExistsException", body["__type"])
	assert.Equal(t, 400, status)
	status, _ = call(t, s, "CreateLogStream", map[string]string{"logGroupName": "g", "logStreamName": "s"}, false)
	assert.Equal(t, 200, status)

	s.Inject("PutLogEvents", Throttling)
	status, body = call(t, s, "PutLogEvents", put(ev{1, goodEMF}), true)
	assert.Equal(t, 400, status)
	assert.Equal(t, "ThrottlingException", body["__type"])
	status, _ = call(t, s, "PutLogEvents", put(ev{1, goodEMF}), true)
	assert.Equal(t, 200, status)
	assert.Len(t, s.Events("g", "s"), 1)
	assert.Empty(t, s.Violations())
}

// The checks must be able to fail, or they would prove nothing.
func TestServerFlagsWhatCloudWatchWouldReject(t *testing.T) {
	s := New("us-east-1")
	defer s.Close()
	s.CreateGroup("g")
	call(t, s, "CreateLogStream", map[string]string{"logGroupName": "g", "logStreamName": "s"}, false)

	call(t, s, "PutLogEvents", put(ev{2, goodEMF}, ev{1, goodEMF}), true)
	call(t, s, "PutLogEvents", put(ev{0, goodEMF}, ev{86_400_000, goodEMF}), true)
	call(t, s, "PutLogEvents", put(ev{1, `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[]},"m":`}), true)
	call(t, s, "PutLogEvents", put(ev{1, `not json`}), false)
	big := strings.Repeat("x", 600_000)
	call(t, s, "PutLogEvents", put(ev{1, `{"a":"` + big + `"}`}, ev{1, `{"a":"` + big + `"}`}), false)

	call(t, s, "PutLogEvents", put(), false)
	call(t, s, "PutLogEvents", map[string]any{"logGroupName": "g", "logStreamName": "s", "logEvents": []map[string]any{{"message": "{}"}}}, false)

	v := strings.Join(s.Violations(), "\n")
	for _, want := range []string{"not chronological", "not less than 24h", "not valid EMF", "not a JSON object", "more than 1048576", "0 events", "lacks timestamp"} {
		assert.Contains(t, v, want)
	}
}

func TestServerChecksSignatureScopeAndContentType(t *testing.T) {
	s := New("eu-west-1")
	defer s.Close()
	call(t, s, "CreateLogGroup", map[string]string{"logGroupName": "g"}, false) // signed for us-east-1
	req, err := http.NewRequest(http.MethodPost, s.URL+"/", strings.NewReader(`{"logGroupName":"h"}`))
	require.NoError(t, err)
	req.Header.Set("X-Amz-Target", "Logs_20140328.CreateLogGroup")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()

	v := strings.Join(s.Violations(), "\n")
	for _, want := range []string{`region "us-east-1"`, "Content-Type", "not SigV4"} {
		assert.Contains(t, v, want)
	}
}

// During an outage the events of refused calls are kept apart: a test can
// tell that data reached the exporter although CloudWatch stored none.
func TestServerKeepsWhatAnOutageRefused(t *testing.T) {
	s := New("us-east-1")
	defer s.Close()
	s.CreateGroup("g")
	call(t, s, "CreateLogStream", map[string]string{"logGroupName": "g", "logStreamName": "s"}, false)

	s.SetDown(Unavailable)
	status, body := call(t, s, "PutLogEvents", put(ev{1, goodEMF}, ev{2, goodEMF}), true)
	assert.Equal(t, 503, status)
	assert.Equal(t, "ServiceUnavailableException", body["__type"])
	s.Up()
	s.Inject("PutLogEvents", Throttling)
	call(t, s, "PutLogEvents", put(ev{3, goodEMF}), true)
	call(t, s, "PutLogEvents", put(ev{4, goodEMF}), true)

	assert.Equal(t, 2, s.RefusedCalls())
	refused := s.Refused()
	require.Len(t, refused, 3)
	assert.Equal(t, Event{Group: "g", Stream: "s", Timestamp: 1, Message: goodEMF, EMF: true}, refused[0])
	assert.Equal(t, []Event{{Group: "g", Stream: "s", Timestamp: 4, Message: goodEMF, EMF: true}}, s.AllEvents())
	n, bytes := s.Accepted()
	assert.Equal(t, int64(1), n)
	assert.Equal(t, int64(len(goodEMF)), bytes)
	assert.Equal(t, 3, s.Calls("PutLogEvents"))
	assert.Empty(t, s.Violations())
}

// A load run's volume must not pile up in memory: CountOnly counts what
// was accepted, stores nothing, and still checks the batch limits.
func TestServerCountOnly(t *testing.T) {
	s := New("us-east-1", CountOnly())
	defer s.Close()
	s.CreateGroup("g")
	call(t, s, "CreateLogStream", map[string]string{"logGroupName": "g", "logStreamName": "s"}, false)

	call(t, s, "PutLogEvents", put(ev{1, goodEMF}, ev{2, `{"a":1}`}), true)
	s.SetDown(Unavailable)
	call(t, s, "PutLogEvents", put(ev{3, goodEMF}), true)
	s.Up()
	call(t, s, "PutLogEvents", put(ev{5, goodEMF}, ev{4, goodEMF}), true)

	n, bytes := s.Accepted()
	assert.Equal(t, int64(4), n)
	assert.Equal(t, int64(3*len(goodEMF)+len(`{"a":1}`)), bytes)
	assert.Empty(t, s.AllEvents())
	assert.Empty(t, s.Refused())
	assert.Equal(t, 1, s.RefusedCalls())
	v := s.Violations()
	require.Len(t, v, 1, "the EMF content is not checked, the order is")
	assert.Contains(t, v[0], "not chronological")
}

func TestServerBoundsViolations(t *testing.T) {
	s := New("us-east-1")
	defer s.Close()
	for i := 0; i < maxViolations+5; i++ {
		call(t, s, "Nonsense", map[string]string{}, false)
	}
	v := s.Violations()
	require.Len(t, v, maxViolations+1)
	assert.Equal(t, "… and 5 more", v[maxViolations])
}

// signed is a PutLogEvents request signed by the SDK's signer over signedBody
// and carrying body.
func signed(t *testing.T, s *Server, secret string, signedBody, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Amz-Target", "Logs_20140328.PutLogEvents")
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	sum := sha256.Sum256(signedBody)
	creds := aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: secret}
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "logs", "us-east-1", time.Now()))
	return req
}

func TestSignaturesAreVerified(t *testing.T) {
	s := New("us-east-1", VerifySignatures("AKIDTEST", "right-secret"))
	defer s.Close()
	s.groups["g"] = &logGroup{streams: map[string]bool{"s": true}}
	b, err := json.Marshal(put(ev{1, goodEMF}))
	require.NoError(t, err)
	other := bytes.Replace(b, []byte(`"timestamp":1`), []byte(`"timestamp":2`), 1)
	require.NotEqual(t, b, other)
	for _, c := range []struct {
		name         string
		secret       string
		signed, sent []byte
		status       int
	}{
		{"good", "right-secret", b, b, 200},
		{"wrong secret", "wrong-secret", b, b, 403},
		{"body changed after signing", "right-secret", b, other, 403},
	} {
		resp, err := http.DefaultClient.Do(signed(t, s, c.secret, c.signed, c.sent))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, c.status, resp.StatusCode, c.name)
	}
	v := s.Violations()
	require.Len(t, v, 2)
	assert.Contains(t, v[0], "signature does not match")
	assert.Contains(t, v[1], "signature does not match")
	assert.Len(t, s.AllEvents(), 1)
}
