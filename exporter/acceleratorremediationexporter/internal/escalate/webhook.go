package escalate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// Webhook posts bundles. It is the escalate step's executor and the
// engine's escalation of failed plans.
type Webhook struct {
	Client   *http.Client
	Endpoint string
	// Evidence returns what was kept about the plan's device.
	Evidence func(p *plan.Plan) Evidence
	Now      func() time.Time
}

func (Webhook) Step() xid.Step                      { return xid.StepEscalate }
func (Webhook) Applies(plan.Subject) (bool, string) { return true, "" }

// Idempotent: a repeated delivery carries the same Idempotency-Key, so a
// receiver can drop the duplicate.
func (Webhook) Idempotent() bool { return true }

func (w Webhook) Run(ctx context.Context, p *plan.Plan, dryRun bool) (executor.Outcome, error) {
	b := w.Bundle(p)
	body, err := json.Marshal(b)
	if err != nil {
		return executor.Outcome{}, err
	}
	if dryRun {
		return executor.Outcome{Detail: fmt.Sprintf("dry run: %d-byte incident bundle not posted", len(body))}, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.Endpoint, bytes.NewReader(body))
	if err != nil {
		return executor.Outcome{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", p.ID+"/"+string(p.State))
	resp, err := w.Client.Do(req)
	if err != nil {
		return executor.Outcome{}, fmt.Errorf("escalation webhook %s: %w", w.Endpoint, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return executor.Outcome{}, fmt.Errorf("escalation webhook %s answered %s", w.Endpoint, resp.Status)
	}
	return executor.Outcome{Detail: "incident bundle posted to " + w.Endpoint}, nil
}

// Bundle builds the incident bundle for p.
func (w Webhook) Bundle(p *plan.Plan) Bundle {
	reason := p.Reason
	if p.State != plan.Failed {
		reason = "the plan hands the case to a person"
	}
	b := Bundle{
		SchemaVersion: SchemaVersion, Kind: Kind, Sent: w.Now().UTC(), Reason: reason,
		Device: p.Subject, FailureMode: p.FailureMode, Action: p.Action, Plan: p, Evidence: p.Evidence,
		RecentEvents: []Event{}, RecentChanges: []Change{}, RecentMetrics: []Series{},
	}
	if w.Evidence != nil {
		ev := w.Evidence(p)
		b.RecentEvents = append(b.RecentEvents, ev.Events...)
		b.RecentChanges = append(b.RecentChanges, ev.Changes...)
		b.RecentMetrics = append(b.RecentMetrics, ev.Metrics...)
	}
	return b
}
