package promscrape

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
)

func newTestClient(t *testing.T, cfg confighttp.ClientConfig, opts ClientOptions) *Client {
	t.Helper()
	c, err := NewClient(context.Background(), &cfg, nil, componenttest.NewNopTelemetrySettings(), opts)
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestClientSendsScrapeAndConfigHeaders(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		_, _ = io.WriteString(w, "a 1\n")
	}))
	defer srv.Close()
	cfg := confighttp.NewDefaultClientConfig()
	cfg.Headers.Set("Authorization", "Bearer secret")
	c := newTestClient(t, cfg, ClientOptions{Accept: AcceptTextOrOpenMetrics, UserAgent: "otelcol-accel/test"})
	text, err := c.Fetch(context.Background(), srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "a 1\n", text)
	assert.Equal(t, AcceptTextOrOpenMetrics, got.Get("Accept"))
	assert.Equal(t, "otelcol-accel/test", got.Get("User-Agent"))
	assert.Equal(t, "Bearer secret", got.Get("Authorization"))

	cfg.Headers.Set("User-Agent", "from-config")
	c = newTestClient(t, cfg, ClientOptions{UserAgent: "otelcol-accel/test"})
	_, err = c.Fetch(context.Background(), srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "from-config", got.Get("User-Agent"), "headers: in the config win")
	assert.Equal(t, AcceptText, got.Get("Accept"))
}

func TestClientTLSFromConfig(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "a 1\n")
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	defer srv.Close()
	cfg := confighttp.NewDefaultClientConfig()
	_, err := newTestClient(t, cfg, ClientOptions{}).Fetch(context.Background(), srv.URL)
	require.Error(t, err, "the test server's certificate is not trusted")
	cfg.TLS.InsecureSkipVerify = true
	text, err := newTestClient(t, cfg, ClientOptions{}).Fetch(context.Background(), srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "a 1\n", text)
}

func TestClientConfigErrors(t *testing.T) {
	cfg := confighttp.NewDefaultClientConfig()
	cfg.Auth = configoptional.Some(configauth.Config{AuthenticatorID: component.MustNewID("bearertokenauth")})
	_, err := NewClient(context.Background(), &cfg, nil, componenttest.NewNopTelemetrySettings(), ClientOptions{})
	require.Error(t, err, "an auth extension needs a host")
	cfg = confighttp.NewDefaultClientConfig()
	cfg.TLS.CAFile = "/nonexistent/ca.pem"
	_, err = NewClient(context.Background(), &cfg, nil, componenttest.NewNopTelemetrySettings(), ClientOptions{})
	require.Error(t, err)
}

func TestClientStatusError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}))
	defer srv.Close()
	c := newTestClient(t, confighttp.NewDefaultClientConfig(), ClientOptions{})
	_, err := c.Fetch(context.Background(), srv.URL)
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusBadGateway, se.Code)
	assert.Equal(t, "answered 502 Bad Gateway", err.Error())
	_, err = c.Get(context.Background(), srv.URL)
	require.ErrorAs(t, err, &se)
}

func TestClientBodyLimit(t *testing.T) {
	page := strings.Repeat("a 1\n", 256) // 1 KiB
	for _, chunked := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if chunked {
				w.(http.Flusher).Flush() // no Content-Length
			}
			_, _ = io.WriteString(w, page)
		}))
		exact := newTestClient(t, confighttp.NewDefaultClientConfig(), ClientOptions{MaxBodyBytes: int64(len(page))})
		text, err := exact.Fetch(context.Background(), srv.URL)
		require.NoError(t, err, "a body of exactly the bound is whole")
		assert.Equal(t, page, text)

		small := newTestClient(t, confighttp.NewDefaultClientConfig(), ClientOptions{MaxBodyBytes: 1000})
		assert.Equal(t, int64(1000), small.MaxBodyBytes())
		text, err = small.Fetch(context.Background(), srv.URL)
		var tooLarge *BodyTooLargeError
		require.ErrorAs(t, err, &tooLarge)
		assert.Equal(t, page[:1000], text, "the part within the bound, for callers that use it")
		assert.Equal(t, "response larger than 1000 bytes", err.Error())

		// Streamed, the lines before the bound are read and the cut is
		// reported.
		body, err := small.Get(context.Background(), srv.URL)
		require.NoError(t, err)
		r := NewReader(body)
		n := 0
		for r.Next() == EntrySample {
			n++
		}
		require.NoError(t, body.Close())
		assert.Equal(t, 250, n)
		require.ErrorAs(t, r.Err(), &tooLarge)
		srv.Close()
	}
	assert.Equal(t, "response larger than 64 MiB", (&BodyTooLargeError{Limit: DefaultMaxBodyBytes}).Error())
}

type failingBody struct{ io.Reader }

func (failingBody) Close() error { return nil }

func TestFetchKeepsWhatCameBeforeACut(t *testing.T) {
	cut := errors.New("connection reset")
	buf, err := readInto(&body{rc: failingBody{&cutReader{text: "a 1\nb", err: cut}}, left: 100, limit: 100}, make([]byte, 0, 1))
	assert.Equal(t, cut, err)
	assert.Equal(t, "a 1\nb", string(buf))
}

// FetchReusing reads into the buffer it is given when the page fits, and
// grows it when not.
func TestFetchReusing(t *testing.T) {
	page := "a 1\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, page)
	}))
	defer srv.Close()
	c := newTestClient(t, confighttp.NewDefaultClientConfig(), ClientOptions{})
	buf := make([]byte, 0, 64)
	resp, got, err := c.FetchReusing(context.Background(), srv.URL, buf)
	require.NoError(t, err)
	assert.Equal(t, page, resp.Text)
	assert.Same(t, unsafe.SliceData(buf[:1]), unsafe.SliceData(got), "read into the given buffer")

	page = strings.Repeat("b 2\n", 100)
	resp, grown, err := c.FetchReusing(context.Background(), srv.URL, got)
	require.NoError(t, err)
	assert.Equal(t, page, resp.Text)
	assert.GreaterOrEqual(t, cap(grown), len(page))
}
