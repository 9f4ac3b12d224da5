package acceleratorremediationexporter

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// resetReport records a node agent's report on a GPU reset in the plan
// that asked for it; the plan's reset_gpu step reads it on its next try.
// The report may reach any replica: it is saved like any plan change, and
// read again and retried when another replica wrote the plan meanwhile.
func (e *remediationExporter) resetReport(res pcommon.Map, lr plog.LogRecord) {
	attrs := lr.Attributes()
	id := str(attrs, accelschema.AttrRemediationPlanID)
	rep := plan.ResetReport{
		Device:  str(res, accelschema.AttrHWID),
		Outcome: str(attrs, accelschema.AttrRemediationOutcome),
		Detail:  lr.Body().AsString(),
		At:      lr.Timestamp().AsTime().UTC(),
	}
	node := str(res, accelschema.AttrK8sNodeName)
	if !accelschema.EnumRemediationOutcome.Has(rep.Outcome) || id == "" || rep.Device == "" {
		e.rlog.Warn("reset-report", "accelerator_remediation: a GPU reset report without plan id, device or a known outcome is ignored",
			zap.String("node", node), zap.String("plan", id), zap.String("device", rep.Device), zap.String("outcome", rep.Outcome))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
	defer cancel()
	err := e.recordReset(ctx, id, node, rep)
	for try := 0; try < 3 && errors.Is(err, errStale); try++ {
		if rerr := e.store.Refresh(ctx); rerr != nil {
			err = rerr
			break
		}
		err = e.recordReset(ctx, id, node, rep)
	}
	if err != nil {
		e.rlog.Error("reset-report", "accelerator_remediation: GPU reset report not recorded", zap.String("plan", id), zap.String("node", node), zap.Error(err))
		return
	}
	e.logger.Info("accelerator_remediation: GPU reset report", zap.String("plan", id), zap.String("node", node),
		zap.String("device", rep.Device), zap.String("outcome", rep.Outcome), zap.String("detail", rep.Detail))
	e.wake()
}

var errStale = errors.New("plan changed meanwhile")

func (e *remediationExporter) recordReset(ctx context.Context, id, node string, rep plan.ResetReport) error {
	p, ok := e.store.Get(id)
	if !ok {
		return fmt.Errorf("no plan %s here (finished and pruned, or made by another remediator)", id)
	}
	if p.Subject.Node != node || p.Subject.DeviceID != rep.Device {
		return fmt.Errorf("plan %s is about %s on %s, not %s on %s", id, p.Subject.DeviceID, p.Subject.Node, rep.Device, node)
	}
	if p.State.Terminal() {
		return nil // nothing reads it any more
	}
	if p.Reset != nil && *p.Reset == rep {
		return nil // the same report again
	}
	p.Reset = &rep
	if err := e.store.Save(ctx, p); err != nil {
		if e.shared != nil {
			return fmt.Errorf("%w: %w", errStale, err)
		}
		return err
	}
	return nil
}
