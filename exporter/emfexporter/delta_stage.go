package emfexporter // import "github.com/otelcol-accel/otelcol-accel/exporter/emfexporter"

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/exporter/emfexporter/internal/delta"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
)

// deltaStage turns cumulative data into deltas BEFORE the sending queue.
// Doing it there, and not when the queue hands a request to be sent, means
// that a retry (or a replay of the persistent queue after a restart) sends
// the same deltas again instead of running the conversion twice, which would
// turn the retried points into zero deltas or duplicates.
type deltaStage struct {
	exporter.Metrics
	conv   *delta.Converter
	logger *zap.Logger
	rl     *componenthealth.Logger
}

func newDeltaStage(next exporter.Metrics, cfg *Config, logger *zap.Logger) *deltaStage {
	return &deltaStage{
		Metrics: next,
		conv:    delta.New(delta.Options{FirstPoint: delta.FirstPoint(cfg.Cumulative.FirstPoint), TTL: cfg.Cumulative.StateTTL}),
		logger:  logger,
		rl:      componenthealth.NewLogger(logger, time.Minute),
	}
}

// Capabilities: the stage converts in place, so the pipeline hands it data
// of its own (cloning it only where another consumer shares it). Copying
// every request that holds a cumulative point was a tenth of a gateway's
// CPU, counting the garbage collection it caused.
func (d *deltaStage) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// ConsumeMetrics converts, then hands on. When the queue refuses the result
// (full) the conversion is undone: the caller may offer the same cumulative
// points again, and they must then count as new, not as duplicates.
func (d *deltaStage) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	undo, st := d.conv.ConvertInPlace(md)
	out := md
	if st.Duplicates > 0 {
		d.rl.Warn("duplicates", "Dropped cumulative points not newer than the last point of their series (sent twice, or out of order)",
			zap.Int("points", st.Duplicates))
	}
	if st.Baselines > 0 && d.logger.Core().Enabled(zap.DebugLevel) {
		d.logger.Debug("Held cumulative points as baselines", zap.Int("points", st.Baselines), zap.Int("series", d.conv.Len()))
	}
	if out.DataPointCount() == 0 {
		return nil
	}
	if err := d.Metrics.ConsumeMetrics(ctx, out); err != nil {
		undo.Apply()
		return err
	}
	return nil
}
