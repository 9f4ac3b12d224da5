// Package exportersource reads an existing dcgm-exporter's /metrics over
// HTTP(S) and maps its DCGM_FI_* fields into the unified schema.
//
// The page is read with internal/promscrape's tolerant Reader: a line that
// cannot be used (a malformed line, a value dcgm-exporter could not read) is
// skipped and reported with its line (and column) in a rate-limited warning,
// and the rest of the response is kept. It reads both the 2.x text (spaces after commas in label sets,
// `Hostname`, `UUID` or `uuid`) and the 3.x/4.x text (`hostname`,
// `pci_bus_id`, `DCGM_FI_DRIVER_VERSION` as a label).
package exportersource

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/backoff"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/promscrape"
	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// Settings configure the source.
type Settings struct {
	Client       confighttp.ClientConfig
	Decoder      Decoder
	Telemetry    component.TelemetrySettings
	ReportStatus func(error)
	// ScrapeFailed is called for each scrape while the exporter is not
	// reachable, the ones the backoff skips included.
	ScrapeFailed  func(context.Context)
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
	client   *promscrape.Client
	backoff  *backoff.Backoff
	warn     *componenthealth.Logger
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
	if set.ScrapeFailed == nil {
		set.ScrapeFailed = func(context.Context) {}
	}
	warn := componenthealth.NewLogger(set.Telemetry.Logger, set.WarningPeriod)
	warn.SetClock(set.Now)
	return &Source{
		set:      set,
		endpoint: MetricsURL(set.Client.Endpoint),
		logger:   set.Telemetry.Logger,
		backoff:  backoff.New(set.BackoffStart, set.BackoffMax),
		warn:     warn,
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
// A response is bounded by promscrape.DefaultMaxBodyBytes (64 MiB):
// dcgm-exporter's page for 8 GPUs with per-pod series is well under one.
func (s *Source) Start(ctx context.Context, host component.Host) error {
	client, err := promscrape.NewClient(ctx, &s.set.Client, host, s.set.Telemetry, promscrape.ClientOptions{Accept: promscrape.AcceptText})
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
	if s.client == nil {
		return snap
	}
	if !s.backoff.Ready(now) {
		if s.down {
			s.set.ScrapeFailed(ctx)
		}
		return snap
	}
	res, err := s.fetch(ctx)
	if err != nil {
		s.unreachable(err)
		if !errors.Is(err, context.Canceled) {
			s.set.ScrapeFailed(ctx)
		}
		return snap
	}
	s.reachable()
	snap.Samples = res.Samples
	s.report(res)
	return snap
}

// fetch reads the page as it arrives; a body cut short (or past the
// bound) keeps what was read, and Result.ReadErr says why it ended.
func (s *Source) fetch(ctx context.Context) (Result, error) {
	body, err := s.client.Get(ctx, s.endpoint)
	if err != nil {
		return Result{}, err
	}
	defer body.Close()
	return s.set.Decoder.Decode(body), nil
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
		s.warn.Warn("no-dcgm", "response has no DCGM_FI_* samples: is endpoint a dcgm-exporter /metrics?",
			zap.String("endpoint", s.endpoint), zap.Int("lines", res.Lines))
	}
	if res.Skipped > 0 {
		details := make([]string, len(res.LineErrors))
		for i, e := range res.LineErrors {
			details[i] = e.Error()
		}
		s.warn.Warn("lines", "skipped dcgm-exporter lines that could not be used; the rest of the scrape is kept",
			zap.String("endpoint", s.endpoint), zap.Int("skipped", res.Skipped), zap.Int("lines", res.Lines),
			zap.Strings("first_errors", details))
	}
	if res.ReadErr != nil {
		s.warn.Warn("truncated", "dcgm-exporter response ended early; the samples read before the cut are kept",
			zap.String("endpoint", s.endpoint), zap.Error(res.ReadErr), zap.Int("samples_kept", len(res.Samples)))
	}
}
