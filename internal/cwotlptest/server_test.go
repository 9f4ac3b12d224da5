package cwotlptest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

var testCreds = Credentials{AccessKeyID: "AKIDUNITTEST00000000", SecretAccessKey: "unitTestSecretNotARealOne"}

func gauges(n int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("hw.id", "GPU-1")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("hw.power")
	points := m.SetEmptyGauge().DataPoints()
	for i := 0; i < n; i++ {
		points.AppendEmpty().SetDoubleValue(float64(i))
	}
	return md
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// request builds a POST the way the collector's otlp_http exporter sends
// it (protobuf, gzip) and signs it as sigv4auth does, after compression.
type request struct {
	path, service, region string
	creds                 Credentials
	body                  []byte
	headers               map[string]string
	at                    time.Time
	// tamper changes the body after signing.
	tamper bool
}

func (rq request) send(t *testing.T, s *Server) *http.Response {
	t.Helper()
	body := gzipped(t, rq.body)
	req, err := http.NewRequest(http.MethodPost, s.URL+rq.path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "gzip")
	for k, v := range rq.headers {
		req.Header.Set(k, v)
	}
	sum := sha256.Sum256(body)
	at := rq.at
	if at.IsZero() {
		at = time.Now()
	}
	creds := aws.Credentials{AccessKeyID: rq.creds.AccessKeyID, SecretAccessKey: rq.creds.SecretAccessKey}
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), rq.service, rq.region, at))
	if rq.tamper {
		body = gzipped(t, append(rq.body, 0))
		req.Body = http.NoBody
		req, err = cloneWithBody(req, body)
		require.NoError(t, err)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func cloneWithBody(req *http.Request, body []byte) (*http.Request, error) {
	out, err := http.NewRequest(req.Method, req.URL.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header = req.Header.Clone()
	return out, nil
}

func metricsBody(t *testing.T, md pmetric.Metrics) []byte {
	t.Helper()
	b, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	require.NoError(t, err)
	return b
}

func logsBody(t *testing.T) []byte {
	t.Helper()
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("xid 79")
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	require.NoError(t, err)
	return b
}

func newServer(t *testing.T) *Server {
	t.Helper()
	s := New("us-west-2", testCreds)
	t.Cleanup(s.Close)
	return s
}

func TestSignedMetricsAreTaken(t *testing.T) {
	s := newServer(t)
	resp := request{path: MetricsPath, service: MetricsService, region: "us-west-2", creds: testCreds, body: metricsBody(t, gauges(3))}.send(t, s)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/x-protobuf", resp.Header.Get("Content-Type"))
	require.Len(t, s.Metrics(), 1)
	assert.Equal(t, 3, s.Metrics()[0].DataPointCount())
	assert.Empty(t, s.Violations())
}

func TestSignedLogsAreTakenWithTheirGroupAndStream(t *testing.T) {
	s := newServer(t)
	resp := request{path: LogsPath, service: LogsService, region: "us-west-2", creds: testCreds, body: logsBody(t),
		headers: map[string]string{LogGroupHeader: "/otelcol-accel/events", LogStreamHeader: "node-1"}}.send(t, s)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, s.Logs(), 1)
	got := s.Logs()[0]
	assert.Equal(t, "/otelcol-accel/events", got.Group)
	assert.Equal(t, "node-1", got.Stream)
	assert.Equal(t, "xid 79", got.Logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Str())
	assert.Empty(t, s.Violations())
}

// Every way a signature can be wrong is refused with 403, and says what.
func TestBadSignaturesAreRefused(t *testing.T) {
	body := metricsBody(t, gauges(1))
	for name, tc := range map[string]struct {
		rq   request
		want string
	}{
		"body changed after signing": {request{path: MetricsPath, service: MetricsService, region: "us-west-2", creds: testCreds, body: body, tamper: true}, "signature does not match"},
		"signed for logs":            {request{path: MetricsPath, service: LogsService, region: "us-west-2", creds: testCreds, body: body}, `service "logs", want region "us-west-2" service "monitoring"`},
		"signed for another region":  {request{path: MetricsPath, service: MetricsService, region: "eu-west-1", creds: testCreds, body: body}, `region "eu-west-1"`},
		"wrong secret": {request{path: MetricsPath, service: MetricsService, region: "us-west-2",
			creds: Credentials{AccessKeyID: testCreds.AccessKeyID, SecretAccessKey: "other"}, body: body}, "signature does not match"},
		"another key":       {request{path: MetricsPath, service: MetricsService, region: "us-west-2", creds: Credentials{AccessKeyID: "AKIDOTHER", SecretAccessKey: "x"}, body: body}, `access key "AKIDOTHER"`},
		"signed 20 min ago": {request{path: MetricsPath, service: MetricsService, region: "us-west-2", creds: testCreds, body: body, at: time.Now().Add(-20 * time.Minute)}, "from the server's clock"},
	} {
		t.Run(name, func(t *testing.T) {
			s := newServer(t)
			resp := tc.rq.send(t, s)
			assert.Equal(t, http.StatusForbidden, resp.StatusCode)
			assert.Empty(t, s.Metrics())
			require.Len(t, s.Violations(), 1)
			assert.Contains(t, s.Violations()[0], tc.want)
		})
	}
}

func TestUnsignedRequestIsRefused(t *testing.T) {
	s := newServer(t)
	resp, err := http.Post(s.URL+MetricsPath, "application/x-protobuf", bytes.NewReader(metricsBody(t, gauges(1))))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Len(t, s.Violations(), 1)
	assert.Contains(t, s.Violations()[0], "is not a SigV4 signature")
}

func TestLogsWithoutGroupOrStreamAreRefused(t *testing.T) {
	s := newServer(t)
	resp := request{path: LogsPath, service: LogsService, region: "us-west-2", creds: testCreds, body: logsBody(t),
		headers: map[string]string{LogGroupHeader: "/otelcol-accel/events"}}.send(t, s)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Empty(t, s.Logs())
	require.Len(t, s.Violations(), 1)
	assert.Contains(t, s.Violations()[0], LogStreamHeader)
}

func TestNotOTLPIsRefused(t *testing.T) {
	s := newServer(t)
	resp := request{path: MetricsPath, service: MetricsService, region: "us-west-2", creds: testCreds, body: []byte("\xff\xff not protobuf")}.send(t, s)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Len(t, s.Violations(), 1)
	assert.Contains(t, s.Violations()[0], "not an OTLP metrics export request")
}

// Over the data point limit the request is taken, and the break recorded.
func TestMetricsOverTheLimitAreViolations(t *testing.T) {
	s := newServer(t)
	resp := request{path: MetricsPath, service: MetricsService, region: "us-west-2", creds: testCreds, body: metricsBody(t, gauges(1001))}.send(t, s)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.Len(t, s.Violations(), 1)
	assert.Contains(t, s.Violations()[0], "1001 data points in one request")
}

func TestOutageRefusesAndKeepsWhatItRefused(t *testing.T) {
	s := newServer(t)
	s.SetDown(http.StatusServiceUnavailable)
	rq := request{path: MetricsPath, service: MetricsService, region: "us-west-2", creds: testCreds, body: metricsBody(t, gauges(2))}
	resp := rq.send(t, s)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Empty(t, s.Metrics())
	require.Len(t, s.RefusedMetrics(), 1)
	assert.Equal(t, 1, s.RefusedCalls())

	s.Up()
	assert.Equal(t, http.StatusOK, rq.send(t, s).StatusCode)
	assert.Len(t, s.Metrics(), 1)
	assert.Empty(t, s.Violations(), strings.Join(s.Violations(), "\n"))
}

func TestUnknownPathIsRefused(t *testing.T) {
	s := newServer(t)
	resp := request{path: "/v1/traces", service: "xray", region: "us-west-2", creds: testCreds, body: []byte{}}.send(t, s)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Len(t, s.Violations(), 1)
	assert.Contains(t, s.Violations()[0], fmt.Sprintf("POST %s", "/v1/traces"))
}

// OTLP/JSON without compression is the endpoints' other format; the answer
// comes back in it.
func TestJSONMetricsAreTaken(t *testing.T) {
	s := newServer(t)
	body, err := pmetricotlp.NewExportRequestFromMetrics(gauges(2)).MarshalJSON()
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.URL+MetricsPath, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: testCreds.AccessKeyID, SecretAccessKey: testCreds.SecretAccessKey}
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), MetricsService, "us-west-2", time.Now()))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.Len(t, s.Metrics(), 1)
	assert.Equal(t, 2, s.Metrics()[0].DataPointCount())
	assert.Empty(t, s.Violations())
}
