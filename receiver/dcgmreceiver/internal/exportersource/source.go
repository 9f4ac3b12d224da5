// Package exportersource reads an existing dcgm-exporter's /metrics over
// HTTP(S) and maps its DCGM_FI_* fields into the unified schema.
//
// The parser is deliberately tolerant: a line it cannot use (a malformed
// line, a value dcgm-exporter could not read) is skipped and reported with
// its line number in a rate-limited warning, and the rest of the response is
// kept. It reads both the 2.x text (spaces after commas in label sets,
// `Hostname`, `UUID` or `uuid`) and the 3.x/4.x text (`hostname`,
// `pci_bus_id`, `DCGM_FI_DRIVER_VERSION` as a label).
package exportersource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/backoff"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/ratelimit"
)

// maxBodyBytes bounds one response; dcgm-exporter's output for 8 GPUs with
// per-pod series is well under a MiB.
const maxBodyBytes = 64 << 20

// Settings configure the source.
type Settings struct {
	Client        confighttp.ClientConfig
	Decoder       Decoder
	Telemetry     component.TelemetrySettings
	ReportStatus  func(error)
	BackoffStart  time.Duration
	BackoffMax    time.Duration
	WarningPeriod time.Duration
	Now           func() time.Time
}

// Source scrapes one dcgm-exporter.
type Source struct {
	set      Settings
	endpoint string
	logger   *zap.Logger
	client   *http.Client
	backoff  *backoff.Backoff
	warn     *ratelimit.Limiter
	down     bool
}

// New returns a source for the endpoint in settings.
func New(set Settings) *Source {
	if set.Now == nil {
		set.Now = time.Now
	}
	if set.ReportStatus == nil {
		set.ReportStatus = func(error) {}
	}
	return &Source{
		set:      set,
		endpoint: MetricsURL(set.Client.Endpoint),
		logger:   set.Telemetry.Logger,
		backoff:  backoff.New(set.BackoffStart, set.BackoffMax),
		warn:     ratelimit.New(set.WarningPeriod).WithClock(set.Now),
	}
}

// MetricsURL adds dcgm-exporter's /metrics path to an endpoint that has
// none.
func MetricsURL(endpoint string) string {
	scheme, rest, ok := strings.Cut(endpoint, "://")
	if !ok {
		return endpoint
	}
	if !strings.Contains(rest, "/") {
		return scheme + "://" + rest + "/metrics"
	}
	return endpoint
}

// Start builds the HTTP client; it fails only on configuration errors (a TLS
// file that cannot be read), never because the exporter is not there yet.
func (s *Source) Start(ctx context.Context, host component.Host) error {
	client, err := s.set.Client.ToClient(ctx, host.GetExtensions(), s.set.Telemetry)
	if err != nil {
		return fmt.Errorf("dcgm-exporter client for %s: %w", s.endpoint, err)
	}
	s.client = client
	return nil
}

// Shutdown closes idle connections.
func (s *Source) Shutdown(context.Context) error {
	if s.client != nil {
		s.client.CloseIdleConnections()
	}
	return nil
}

// Scrape reads the exporter once. While it is unreachable the snapshot is
// empty and attempts are spaced out by the backoff.
func (s *Source) Scrape(ctx context.Context) *model.Snapshot {
	now := s.set.Now()
	snap := &model.Snapshot{Time: now}
	if s.client == nil || !s.backoff.Ready(now) {
		return snap
	}
	res, err := s.fetch(ctx)
	if err != nil {
		s.unreachable(err)
		return snap
	}
	s.reachable()
	snap.Samples = res.Samples
	s.report(res)
	return snap
}

func (s *Source) fetch(ctx context.Context) (Result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.endpoint, http.NoBody)
	if err != nil {
		return Result{}, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return Result{}, fmt.Errorf("answered %s", resp.Status)
	}
	body := &limitedReader{r: resp.Body, n: maxBodyBytes}
	return s.set.Decoder.Decode(body), nil
}

// limitedReader ends a body that is too large with an error rather than
// silently, so that the cut is reported.
type limitedReader struct {
	r io.Reader
	n int64
}

var errBodyTooLarge = fmt.Errorf("response larger than %d MiB", maxBodyBytes>>20)

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

func (s *Source) unreachable(err error) {
	wait := s.backoff.Failed(s.set.Now())
	if errors.Is(err, context.Canceled) {
		return
	}
	msg := fmt.Sprintf("dcgm-exporter at %s is not reachable: start dcgm-exporter or point endpoint at it (retrying with backoff)", s.endpoint)
	if !s.down {
		s.down = true
		s.logger.Warn(msg, zap.Error(err), zap.Duration("next_attempt_in", wait))
		s.set.ReportStatus(fmt.Errorf("dcgm-exporter at %s is not reachable: %w", s.endpoint, err))
		return
	}
	s.logger.Debug(msg, zap.Error(err), zap.Duration("next_attempt_in", wait))
}

func (s *Source) reachable() {
	s.backoff.Succeeded()
	if s.down {
		s.down = false
		s.logger.Info("dcgm-exporter is reachable again", zap.String("endpoint", s.endpoint))
	}
	s.set.ReportStatus(nil)
}

func (s *Source) report(res Result) {
	if res.Lines > 0 && res.DCGMLines == 0 {
		if ok, held := s.warn.Allow("no-dcgm"); ok {
			s.logger.Warn("response has no DCGM_FI_* samples: is endpoint a dcgm-exporter /metrics?",
				zap.String("endpoint", s.endpoint), zap.Int("lines", res.Lines), zap.Int("repeats_suppressed", held))
		}
	}
	if res.Skipped > 0 {
		if ok, held := s.warn.Allow("lines"); ok {
			details := make([]string, len(res.LineErrors))
			for i, e := range res.LineErrors {
				details[i] = e.Error()
			}
			s.logger.Warn("skipped dcgm-exporter lines that could not be used; the rest of the scrape is kept",
				zap.String("endpoint", s.endpoint), zap.Int("skipped", res.Skipped), zap.Int("lines", res.Lines),
				zap.Strings("first_errors", details), zap.Int("repeats_suppressed", held))
		}
	}
	if res.ReadErr != nil {
		if ok, held := s.warn.Allow("truncated"); ok {
			s.logger.Warn("dcgm-exporter response ended early; the samples read before the cut are kept",
				zap.String("endpoint", s.endpoint), zap.Error(res.ReadErr), zap.Int("samples_kept", len(res.Samples)),
				zap.Int("repeats_suppressed", held))
		}
	}
}
