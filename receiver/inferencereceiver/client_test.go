package inferencereceiver

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth/componenthealthtest"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/normalize"
)

// The targets are scraped with the confighttp client of the config: tls:
// keeps the meaning it had, and headers: (an API key in front of vLLM) go
// with every request.
func TestHTTPClientFromConfig(t *testing.T) {
	body := readFixture(t, "vllm_v1.txt")
	var (
		mu  sync.Mutex
		got http.Header
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		_, _ = io.WriteString(w, body)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	srv.StartTLS()
	t.Cleanup(srv.Close)

	untrusted := newHarness(t, configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM}))
	assert.Zero(t, untrusted.scrape(t).ResourceMetrics().Len())
	assert.Contains(t, untrusted.host.Last().Err().Error(), "certificate")

	cfg := configFor(TargetConfig{Endpoint: srv.URL, Server: normalize.VLLM})
	cfg.TLS.InsecureSkipVerify = true
	cfg.Headers.Set("Authorization", "Bearer vllm-api-key")
	h := newHarness(t, cfg)
	assert.Equal(t, 1, h.scrape(t).ResourceMetrics().Len(), "the server scraped")
	assert.Empty(t, h.host.Statuses(), "and up")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "Bearer vllm-api-key", got.Get("Authorization"))
	assert.Equal(t, "otelcol-accel/test (inference receiver)", got.Get("User-Agent"))
	assert.Contains(t, got.Get("Accept"), "text/plain;version=0.0.4")
}

func TestClientConfigErrorFailsStart(t *testing.T) {
	cfg := configFor(TargetConfig{Endpoint: "https://10.0.0.7:8000/metrics"})
	cfg.TLS.CAFile = "/nonexistent/inference-ca.pem"
	s := newScraper(cfg, receivertest.NewNopSettings(metadata.Type), defaultOptions())
	err := s.start(t.Context(), &componenthealthtest.Host{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "inference receiver http client")
}
