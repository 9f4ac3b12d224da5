package inferencereceiver // import "github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/otelcol-accel/otelcol-accel/internal/firstrequest"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/receiver/inferencereceiver/internal/metadata"
)

// NewFactory creates the factory of the inference receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		receiver.WithMetrics(createMetrics, metadata.MetricsStability),
	)
}

// options are the boundaries tests replace: the clock and the Kubernetes
// informers.
type options struct {
	now func() time.Time
	// registry holds the informers shared with the other components of
	// the agent; nil is k8sclient.Shared().
	registry *k8sclient.Registry
	// firstRequests receives each pod's first finished request, for the
	// accelerator_k8s receiver's cold starts; nil records none.
	firstRequests *firstrequest.Registry
}

func defaultOptions() options {
	return options{now: time.Now, registry: k8sclient.Shared(), firstRequests: firstrequest.Shared()}
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	return newReceiver(set, cfg.(*Config), next, defaultOptions())
}

func newReceiver(set receiver.Settings, cfg *Config, next consumer.Metrics, opts options, extra ...scraperhelper.ControllerOption) (receiver.Metrics, error) {
	s := newScraper(cfg, set, opts)
	sc, err := scraper.NewMetrics(s.scrape, scraper.WithStart(s.start), scraper.WithShutdown(s.shutdown))
	if err != nil {
		return nil, err
	}
	return scraperhelper.NewMetricsController(&cfg.ControllerConfig, set, next,
		append([]scraperhelper.ControllerOption{scraperhelper.AddMetricsScraper(metadata.Type, sc)}, extra...)...)
}
