package acceleratorremediationexporter

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/kube"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
)

// openStore chooses where plans are kept. With leader election the plans
// live in the cluster (a ConfigMap per plan in the Lease's namespace, see
// internal/kube's PlanStore): every replica reads them, so the replica that
// takes the Lease resumes the old leader's plans without repeating a done
// step. Without it (one replica, or no Kubernetes) they live in the
// storage extension, which survives a restart of that one replica.
func (e *remediationExporter) openStore(ctx context.Context, host component.Host, cs kubernetes.Interface) error {
	if e.cfg.LeaderElection.Enabled && cs != nil {
		if e.cfg.Storage != nil {
			e.logger.Info("accelerator_remediation: plans are kept in the cluster, shared by the replicas that compete for the lease; the storage extension is not used for them",
				zap.String("namespace", e.cfg.LeaderElection.Namespace), zap.String("lease", e.cfg.LeaderElection.LeaseName))
		}
		e.shared = &kube.PlanStore{CS: cs, Namespace: e.cfg.LeaderElection.Namespace, Owner: e.cfg.LeaderElection.LeaseName}
		e.store = plan.NewStoreOn(e.shared, e.cfg.Retention)
		// The API server may not answer yet: every tick reads the plans
		// again before acting, and acts only on a fresh read.
		if err := e.store.Load(ctx); err != nil {
			e.problems.Fail("plans", err)
			e.rlog.Error("plans", "accelerator_remediation: plans in the cluster not read yet", zap.Error(err))
		}
		return nil
	}
	if e.cfg.Storage != nil {
		c, err := storageClient(ctx, host, *e.cfg.Storage, e.set.ID)
		if err != nil {
			return err
		}
		e.storage = c
	}
	e.store = plan.NewStore(e.storage, e.cfg.Retention)
	if err := e.store.Load(ctx); err != nil {
		return fmt.Errorf("accelerator_remediation: plans in storage %v unreadable: %w", e.cfg.Storage, err)
	}
	return nil
}

// refresh reads the shared plans again: another replica may have created
// plans (events it received) or, as the leader, advanced them. It reports
// whether the plans in memory are fresh enough to act on.
func (e *remediationExporter) refresh(ctx context.Context) bool {
	if e.shared == nil {
		return true
	}
	if err := e.store.Refresh(ctx); err != nil {
		e.problems.Fail("plans", err)
		e.rlog.Error("plans", "accelerator_remediation: plans in the cluster not read; nothing is acted on until they are", zap.Error(err))
		return false
	}
	return true
}

// joinDuplicates forgets an open plan that another, older open plan of the
// same device (or node) and action already covers, when nothing of it ran:
// two replicas that each received the device's events made one plan each.
func (e *remediationExporter) joinDuplicates(ctx context.Context) {
	for _, d := range e.store.Duplicates() {
		if err := e.store.Forget(ctx, d.Plan.ID); err != nil {
			e.rlog.Error("plans", "accelerator_remediation: duplicate plan not removed", zap.String("plan", d.Plan.ID), zap.Error(err))
			continue
		}
		e.audit.Joined(d.Plan, d.Joins)
	}
}
