package acceleratorremediationexporter

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// audit writes every plan change and every step's outcome as a structured
// log record of the collector (who approved and when, what each step did)
// and counts them in the component's telemetry. The records are the audit
// trail: they go wherever the collector's own logs go.
type audit struct {
	logger    *zap.Logger
	telemetry *metadata.TelemetryBuilder
}

func planFields(p *plan.Plan) []zap.Field {
	f := []zap.Field{
		zap.String("plan", p.ID), zap.String("state", string(p.State)), zap.String("reason", p.Reason),
		zap.String("action", p.Action), zap.String("failure_mode", p.FailureMode), zap.String("scope", string(p.Scope)),
		zap.String("node", p.Subject.Node), zap.String("device", p.Subject.DeviceID), zap.String("instance", p.Subject.InstanceID),
		zap.String("event", p.Evidence.Event),
	}
	if p.Evidence.XID != 0 {
		f = append(f, zap.Int("xid", p.Evidence.XID))
	}
	if r := p.Evidence.Attributes[accelschema.AttrHealthReporter]; r != "" {
		f = append(f, zap.String("reported_by", r))
	}
	if p.Approval != nil {
		f = append(f, zap.String("approved_by", p.Approval.By), zap.Time("approved_at", p.Approval.At), zap.String("approved_via", p.Approval.Via))
	}
	return f
}

// Created records a new plan with its steps.
func (a *audit) Created(p *plan.Plan) {
	steps := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		steps[i] = string(s.Kind)
	}
	a.logger.Info("accelerator_remediation: plan created", append(planFields(p), zap.Strings("steps", steps))...)
}

func (a *audit) PlanChanged(p *plan.Plan) {
	lvl := a.logger.Info
	if p.State == plan.Failed || p.State == plan.Expired {
		lvl = a.logger.Warn
	}
	lvl("accelerator_remediation: plan "+string(p.State), planFields(p)...)
}

func (a *audit) StepFinished(p *plan.Plan, i int, err error) {
	s := p.Steps[i]
	outcome := string(s.State)
	if err != nil && s.State != plan.StepFailed {
		outcome = "retrying"
	}
	fields := append(planFields(p),
		zap.String("step", string(s.Kind)), zap.String("step_state", string(s.State)), zap.String("outcome", s.Outcome),
		zap.Int("attempts", s.Attempts), zap.Bool("dry_run", s.DryRun), zap.String("step_reason", s.Reason))
	if err != nil {
		a.logger.Warn("accelerator_remediation: step "+outcome, append(fields, zap.Error(err))...)
	} else {
		a.logger.Info("accelerator_remediation: step "+outcome, fields...)
	}
	a.telemetry.ExporterRemediationActions.Add(context.Background(), 1,
		metric.WithAttributes(attribute.String("step", string(s.Kind)), attribute.String("outcome", outcome)))
}

// Joined records a plan removed because the open plan joins already
// covers its device (or node) and action: nothing of it ran.
func (a *audit) Joined(p *plan.Plan, joins string) {
	a.logger.Info("accelerator_remediation: plan joins the open plan of the same device and action",
		append(planFields(p), zap.String("joins", joins))...)
}

func (a *audit) Escalated(p *plan.Plan, err error) {
	outcome := "delivered"
	if err != nil {
		outcome = "retrying"
		a.logger.Warn("accelerator_remediation: escalation not delivered; retrying", append(planFields(p), zap.Error(err))...)
	} else {
		a.logger.Info("accelerator_remediation: plan escalated", planFields(p)...)
	}
	a.telemetry.ExporterRemediationEscalations.Add(context.Background(), 1, metric.WithAttributes(attribute.String("outcome", outcome)))
}

// states records how many plans are in each state.
func (a *audit) states(all []*plan.Plan) {
	counts := map[plan.State]int64{}
	for _, p := range all {
		counts[p.State]++
	}
	for _, s := range plan.States {
		a.telemetry.ExporterRemediationPlans.Record(context.Background(), counts[s], metric.WithAttributes(attribute.String("state", string(s))))
	}
}
