package output

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"

	"github.com/otelcol-accel/otelcol-accel/internal/cwlogstest"
)

// verified makes the fake check every request's signature with the
// credentials isolateAWS gives the SDK.
var verified = cwlogstest.VerifySignatures("AKIDSTATICTEST", "static-secret")

// isolateAWS gives the SDK static test credentials and nothing else to find.
func isolateAWS(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDSTATICTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "static-secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ENDPOINT_URL", "")
}

type recorder struct {
	mu        sync.Mutex
	rejected  int
	failures  []string
	permanent int
	delivered int
}

func (r *recorder) Rejected(_, _ string, tooNew, tooOld, expired int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected += tooNew + tooOld + expired
}

func (r *recorder) Failed(g, s string, err error, permanent bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, fmt.Sprintf("%s/%s: %v", g, s, err))
	if permanent {
		r.permanent++
	}
}

func (r *recorder) Delivered() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delivered++
}

func startSink(t *testing.T, srv *cwlogstest.Server, cfg ClientConfig, retention int32) (*CloudWatchLogs, *recorder) {
	t.Helper()
	isolateAWS(t)
	cfg.Endpoint = srv.URL
	rec := &recorder{}
	sink := NewCloudWatchLogs(func(ctx context.Context) (LogsAPI, error) {
		api, _, err := NewLogsClient(ctx, cfg)
		return api, err
	}, retention, rec)
	require.NoError(t, sink.Start(context.Background(), componenttest.NewNopHost()))
	return sink, rec
}

func emfEvents(group, stream string, n, origin int) []Event {
	var out []Event
	for i := 0; i < n; i++ {
		msg := fmt.Sprintf(`{"_aws":{"Timestamp":%d,"CloudWatchMetrics":[{"Namespace":"Test","Dimensions":[["Node"]],"Metrics":[{"Name":"m","Unit":"Count","StorageResolution":60}]}]},"Node":"n1","m":%d}`, 1772366400000+int64(i), i)
		out = append(out, Event{Group: group, Stream: stream, Timestamp: 1772366400000 + int64(i), Message: []byte(msg), Origin: origin})
	}
	return out
}

func TestCreatesGroupAndStreamWithRetention(t *testing.T) {
	srv := cwlogstest.New("us-west-2", verified)
	defer srv.Close()
	sink, rec := startSink(t, srv, ClientConfig{Region: "us-west-2"}, 14)

	require.NoError(t, sink.Send(context.Background(), emfEvents("/otelcol-accel/metrics", "node-1", 5, 0), true))
	assert.Len(t, srv.Events("/otelcol-accel/metrics", "node-1"), 5)
	days, ok := srv.Retention("/otelcol-accel/metrics")
	assert.True(t, ok)
	assert.Equal(t, int32(14), days)
	assert.Equal(t, 1, srv.Calls("CreateLogGroup"))
	assert.Equal(t, 2, srv.Calls("CreateLogStream"), "stream first (group missing), then again after the group")

	// The group exists now; a second stream needs only CreateLogStream.
	require.NoError(t, sink.Send(context.Background(), emfEvents("/otelcol-accel/metrics", "node-2", 1, 0), true))
	assert.Equal(t, 1, srv.Calls("CreateLogGroup"))
	assert.Empty(t, srv.Violations())
	assert.Equal(t, 2, rec.delivered)
	assert.Equal(t, map[string]int{"AKIDSTATICTEST": srv.Calls("PutLogEvents") + srv.Calls("CreateLogGroup") + srv.Calls("CreateLogStream") + srv.Calls("PutRetentionPolicy")}, srv.AccessKeys())
}

func TestThrottlingFailsOnlyTheStreamConcerned(t *testing.T) {
	srv := cwlogstest.New("us-east-1", verified)
	defer srv.Close()
	srv.CreateGroup("g")
	sink, rec := startSink(t, srv, ClientConfig{Region: "us-east-1"}, 0)
	// Create both streams first.
	require.NoError(t, sink.Send(context.Background(), append(emfEvents("g", "a", 1, 0), emfEvents("g", "b", 1, 1)...), true))

	srv.Inject("PutLogEvents", cwlogstest.Throttling)
	evs := append(emfEvents("g", "a", 3, 0), emfEvents("g", "b", 3, 1)...)
	err := sink.Send(context.Background(), evs, true)
	failed, ok := AsFailed(err)
	require.True(t, ok, "throttling is retryable: %v", err)
	assert.False(t, consumererror.IsPermanent(err))
	assert.Equal(t, map[int]bool{0: true}, failed.Origins, "stream b was delivered; only resource 0 is retried")
	assert.ErrorContains(t, err, "ThrottlingException")
	assert.Len(t, srv.Events("g", "b"), 4)
	assert.Len(t, srv.Events("g", "a"), 1)
	require.Len(t, rec.failures, 1)

	require.NoError(t, sink.Send(context.Background(), emfEvents("g", "a", 3, 0), true))
	assert.Len(t, srv.Events("g", "a"), 4)
	assert.Empty(t, srv.Violations())
}

func TestServerErrorsAreRetryableAndMalformedBatchesPermanent(t *testing.T) {
	srv := cwlogstest.New("us-east-1", verified)
	defer srv.Close()
	srv.CreateGroup("g")
	sink, rec := startSink(t, srv, ClientConfig{Region: "us-east-1"}, 0)
	require.NoError(t, sink.Send(context.Background(), emfEvents("g", "s", 1, 0), true))

	for _, f := range []cwlogstest.Fault{cwlogstest.InternalError, cwlogstest.Unavailable, {Status: 502}} {
		srv.Inject("PutLogEvents", f)
		err := sink.Send(context.Background(), emfEvents("g", "s", 1, 7), true)
		failed, ok := AsFailed(err)
		require.True(t, ok, "%d should be retryable: %v", f.Status, err)
		assert.Equal(t, map[int]bool{7: true}, failed.Origins)
	}

	srv.Inject("PutLogEvents", cwlogstest.Fault{Status: 400, Type: "InvalidParameterException", Message: "Log event too large"})
	err := sink.Send(context.Background(), emfEvents("g", "s", 1, 0), true)
	assert.NoError(t, err, "a batch CloudWatch refuses for good is reported and dropped, not retried forever")
	assert.Equal(t, 1, rec.permanent)
	assert.Contains(t, rec.failures[len(rec.failures)-1], "InvalidParameterException")
}

func TestLargeSendsAreBatchedWithinLimits(t *testing.T) {
	srv := cwlogstest.New("us-east-1", verified)
	defer srv.Close()
	sink, _ := startSink(t, srv, ClientConfig{Region: "us-east-1"}, 0)
	evs := emfEvents("g", "s", 12_000, 0)
	// Reverse them: the sink must sort.
	for i, j := 0, len(evs)-1; i < j; i, j = i+1, j-1 {
		evs[i], evs[j] = evs[j], evs[i]
	}
	require.NoError(t, sink.Send(context.Background(), evs, true))
	assert.Len(t, srv.Events("g", "s"), 12_000)
	want := Batches(emfEvents("g", "s", 12_000, 0))
	assert.Len(t, want, 3, "12,000 events of ~180 bytes: cut by bytes (2.4 MB) as well as by count")
	assert.Equal(t, 1+len(want), srv.Calls("PutLogEvents"), "the first attempt finds no group")
	assert.Empty(t, srv.Violations())
}

func TestRoleIsAssumedThroughSTS(t *testing.T) {
	srv := cwlogstest.New("eu-west-1", verified)
	defer srv.Close()
	isolateAWS(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", srv.URL)
	role := "arn:aws:iam::123456789012:role/otelcol-accel-emf"
	sink := NewCloudWatchLogs(func(ctx context.Context) (LogsAPI, error) {
		api, _, err := NewLogsClient(ctx, ClientConfig{Region: "eu-west-1", Endpoint: srv.URL, RoleARN: role})
		return api, err
	}, 0, &recorder{})
	require.NoError(t, sink.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, sink.Send(context.Background(), emfEvents("g", "s", 1, 0), true))
	assert.Equal(t, []string{role}, srv.AssumedRoles())
	keys := srv.AccessKeys()
	assert.NotZero(t, keys[cwlogstest.AssumedAccessKey], "CloudWatch Logs calls are signed with the assumed role's key")
	assert.Zero(t, keys["AKIDSTATICTEST"])
}

func TestMissingRegionFailsStart(t *testing.T) {
	isolateAWS(t)
	sink := NewCloudWatchLogs(func(ctx context.Context) (LogsAPI, error) {
		api, _, err := NewLogsClient(ctx, ClientConfig{})
		return api, err
	}, 0, &recorder{})
	err := sink.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, "no AWS region")
}

// The body is written by putBody, not the SDK: every message must arrive
// as it was, whatever it holds, in a request the fake can verify the
// signature of.
func TestMessagesArriveAsWritten(t *testing.T) {
	srv := cwlogstest.New("us-east-1", verified)
	defer srv.Close()
	srv.CreateGroup("/otelcol-accel/logs")
	sink, rec := startSink(t, srv, ClientConfig{Region: "us-east-1"}, 0)
	msgs := []string{
		`{"a":"b"}`,
		`{"quote":"say \"hi\"","backslash":"C:\\x","tab":"\t","ctl":"\u0001"}`,
		`{"utf8":"é漢字🙂","sep":"\u2028"}`,
		"{\"raw\":\"é\u2028\u2029\"}",
	}
	var evs []Event
	for i, m := range msgs {
		evs = append(evs, Event{Group: "/otelcol-accel/logs", Stream: "s/ü", Timestamp: 1772366400000 + int64(i), Message: []byte(m)})
	}
	require.NoError(t, sink.Send(context.Background(), evs, false))
	got := srv.Events("/otelcol-accel/logs", "s/ü")
	require.Len(t, got, len(msgs))
	for i, m := range msgs {
		assert.Equal(t, m, got[i].Message)
		assert.Equal(t, 1772366400000+int64(i), got[i].Timestamp)
		assert.False(t, got[i].EMF)
	}
	assert.Empty(t, srv.Violations())
	assert.Equal(t, 1, rec.delivered)
}

// BenchmarkSend measures what the exporter spends on PutLogEvents: 16
// streams of 500 EMF events of ~1.5 kB (the size real agent output makes)
// through the SDK, signed, over loopback, to a server that reads each body
// and answers success. It is not cwlogstest: decoding and checking the body
// would cost more than sending it and hide the client's cost, which is what
// is measured. TestMessagesArriveAsWritten holds the body to the fake.
func BenchmarkSend(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_, _ = io.WriteString(w, `{"nextSequenceToken":"49039859565436000000000000000000000000000000000000000000"}`)
	}))
	defer srv.Close()
	dir := b.TempDir()
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "AKIDSTATICTEST", "AWS_SECRET_ACCESS_KEY": "static-secret", "AWS_PROFILE": "", "AWS_CONFIG_FILE": dir + "/c", "AWS_SHARED_CREDENTIALS_FILE": dir + "/s", "AWS_EC2_METADATA_DISABLED": "true"} {
		b.Setenv(k, v)
	}
	sink := NewCloudWatchLogs(func(ctx context.Context) (LogsAPI, error) {
		api, _, err := NewLogsClient(ctx, ClientConfig{Region: "us-east-1", Endpoint: srv.URL})
		return api, err
	}, 0, &recorder{})
	require.NoError(b, sink.Start(context.Background(), componenttest.NewNopHost()))
	pad := strings.Repeat(`,"k8s.pod.label.app.kubernetes.io/name":"inference-server"`, 22)
	var evs []Event
	size := 0
	for s := 0; s < 16; s++ {
		for i := 0; i < 500; i++ {
			msg := fmt.Sprintf(`{"_aws":{"Timestamp":%d,"CloudWatchMetrics":[{"Namespace":"Accelerators","Dimensions":[["Node"]],"Metrics":[{"Name":"m","Unit":"Count","StorageResolution":60}]}]},"Node":"n%d","m":%d%s}`, 1772366400000+int64(i), s, i, pad)
			size += len(msg)
			evs = append(evs, Event{Group: "g", Stream: fmt.Sprintf("node-%d", s), Timestamp: 1772366400000 + int64(i), Message: []byte(msg)})
		}
	}
	b.ReportAllocs()
	b.SetBytes(int64(size))
	for b.Loop() {
		if err := sink.Send(context.Background(), evs, true); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
