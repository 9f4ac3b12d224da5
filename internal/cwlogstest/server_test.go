package cwlogstest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

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

	v := strings.Join(s.Violations(), "\n")
	for _, want := range []string{"not chronological", "not less than 24h", "not valid EMF", "not a JSON object", "more than 1048576"} {
		assert.Contains(t, v, want)
	}
}
