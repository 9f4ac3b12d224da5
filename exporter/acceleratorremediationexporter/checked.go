package acceleratorremediationexporter

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/senderauth"
)

// unchecked reports (and counts and logs, rate-limited) data that did not
// come through the accelerator_sender processor: the remediator acts only
// on evidence whose sender was checked to be the node's own agent, so
// anything else — a pipeline without the check, or one that batches or
// queues after it and so loses its mark — is dropped, never acted on.
func (e *remediationExporter) unchecked(ctx context.Context, signal string, items int) bool {
	if senderauth.Checked(ctx) {
		return false
	}
	if items == 0 {
		return true
	}
	e.telemetry.ExporterRemediationUnchecked.Add(ctx, int64(items), metric.WithAttributes(attribute.String("signal", signal)))
	e.rlog.Error("unchecked/"+signal, "accelerator_remediation: dropped data that did not come through the accelerator_sender processor; "+
		"nothing is acted on unless its sender was checked: put accelerator_sender last in this pipeline's processors (nothing that batches or queues after it)",
		zap.String("signal", signal), zap.Int("items", items))
	return true
}
