package kube

import (
	"context"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// EvictHolders evicts only the pods holding the failed device, as the
// health event named them (the attributes processor attaches the holder of
// a device held by one pod). Healthy devices' pods on the same node are not
// touched. An event that names no holder of an allocated device (a shared
// device's event is not copied per holder) evicts nothing: the step says
// so, and the device taint or cordon before it keeps new work off.
type EvictHolders struct{ *Cluster }

func (EvictHolders) Step() xid.Step                        { return xid.StepEvictHolders }
func (EvictHolders) Applies(s plan.Subject) (bool, string) { return onNode(s) }
func (EvictHolders) Idempotent() bool                      { return true }

func (e EvictHolders) Run(ctx context.Context, p *plan.Plan, dry bool) (executor.Outcome, error) {
	if len(p.Subject.Holders) == 0 {
		detail := "the device has no holder: nothing to evict"
		if !p.Subject.HoldersKnown {
			detail = "the event names no holder of the device (shared or not attributed): nothing evicted"
		}
		return executor.Outcome{Skipped: true, Detail: detail}, nil
	}
	r, err := evictor(e).evict(ctx, p.Subject.Node, p.Subject.Holders, dry)
	return executor.Outcome{Detail: r.String()}, err
}
