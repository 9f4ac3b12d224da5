package acceleratorremediationexporter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/engine"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/escalate"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/executor"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/guard"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/kube"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/leader"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/metadata"
	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorremediationexporter/internal/plan"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/remediationplans"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

type remediationExporter struct {
	cfg       *Config
	set       exporter.Settings
	logger    *zap.Logger
	rlog      *componenthealth.Logger
	problems  *componenthealth.Problems
	telemetry *metadata.TelemetryBuilder
	audit     *audit
	evidence  *evidence
	now       func() time.Time

	intakeMu sync.Mutex
	store    *plan.Store
	storage  storage.Client
	// shared is the cluster's copy of the plans, when the replicas share
	// them (leader election).
	shared *kube.PlanStore
	// nodeLabels is the recent label changes of the nodes (a watch), for
	// the incident bundle; nil without Kubernetes or escalation.
	nodeLabels *kube.NodeLabels
	engine     *engine.Engine
	elector    *leader.Elector
	// clientset overrides the one built from cfg.Kubernetes, and manual
	// leaves the ticking to the caller (tests drive the clock).
	clientset kubernetes.Interface
	dynamic   dynamic.Interface
	manual    bool

	// console takes approvals from internal/remediationplans (the insights
	// console); unregister removes this exporter from that registry.
	console    *consoleApprovals
	unregister func()

	wakeCh chan struct{}
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func newExporter(cfg *Config, set exporter.Settings) (*remediationExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &remediationExporter{
		cfg:       cfg,
		set:       set,
		logger:    set.Logger,
		rlog:      componenthealth.NewLogger(set.Logger, time.Minute),
		problems:  componenthealth.NewProblems(),
		telemetry: tb,
		audit:     &audit{logger: set.Logger, telemetry: tb},
		evidence:  newEvidence(cfg.Escalation.Endpoint != ""),
		now:       nowUTC,
		wakeCh:    make(chan struct{}, 1),
	}, nil
}

// wake asks the loop for an early tick (a new plan).
func (e *remediationExporter) wake() {
	select {
	case e.wakeCh <- struct{}{}:
	default:
	}
}

func (e *remediationExporter) Start(ctx context.Context, host component.Host) error {
	e.problems.Start(host)
	execs := executor.Set{}
	var approvals engine.Approvals
	var fleet guard.Fleet
	cs, dyn := e.clientset, e.dynamic // dyn: Karpenter's NodeClaims
	if e.cfg.Kubernetes.Enabled && cs == nil {
		rc, err := e.cfg.Kubernetes.RestConfig()
		if err != nil {
			return fmt.Errorf("accelerator_remediation: kubernetes: %w", err)
		}
		rc.UserAgent = "otelcol-accel-remediator"
		if cs, err = kubernetes.NewForConfig(rc); err != nil {
			return fmt.Errorf("accelerator_remediation: kubernetes: %w", err)
		}
		if dyn, err = dynamic.NewForConfig(rc); err != nil {
			return fmt.Errorf("accelerator_remediation: kubernetes: %w", err)
		}
	}
	if err := e.openStore(ctx, host, cs); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	var cluster *kube.Cluster
	if cs != nil {
		cl := &kube.Cluster{CS: cs, Prefix: e.cfg.Prefix, Component: "otelcol-accel-remediator"}
		cluster = cl
		execs.Add(kube.Condition{Cluster: cl}, kube.Event{Cluster: cl}, kube.Cordon{Cluster: cl},
			kube.EvictHolders{Cluster: cl}, kube.Drain{Cluster: cl}, kube.RestartWorkload{Cluster: cl}, kube.DeviceTaint{Cluster: cl})
		approvals = kube.Approvals{Cluster: cl}
		fleet = cl.Fleet(runCtx)
		if e.cfg.Escalation.Endpoint != "" { // only the incident bundle reads them
			e.nodeLabels = cl.WatchNodeLabels(runCtx, e.now)
		}
	}
	if e.cfg.GPUReset.Enabled && cluster != nil {
		execs.Add(kube.ResetGPU{Cluster: cluster})
	} else {
		execs.Add(unavailable{step: xid.StepResetGPU, why: "the node-local GPU reset is off (gpu_reset.enabled, and the accelerator_gpu_reset receiver on the agents): reset the GPU on its node (nvidia-smi -r -i <index>) once nothing holds it, then remove the taint"})
	}
	if err := e.addAWS(ctx, execs); err != nil {
		cancel()
		return err
	}
	if dyn != nil {
		execs.Add(replaceInstance{karpenter: kube.ReplaceKarpenterNode{Cluster: cluster, Dynamic: dyn}, asg: execs[xid.StepMarkUnhealthy]})
	}
	if e.cfg.Escalation.Endpoint != "" {
		client, err := e.cfg.Escalation.ToClient(ctx, host.GetExtensions(), e.set.TelemetrySettings)
		if err != nil {
			cancel()
			return fmt.Errorf("accelerator_remediation: escalation: %w", err)
		}
		execs.Add(escalate.Webhook{Client: client, Endpoint: e.cfg.Escalation.Endpoint, Now: e.now, Evidence: e.bundleEvidence})
	}
	e.console = newConsoleApprovals(approvals)
	e.engine = engine.New(engine.Config{
		Modes: e.cfg.engineModes(), DefaultMode: e.cfg.Mode, ApprovalTTL: e.cfg.ApprovalTTL, DryRun: e.cfg.DryRun,
		Guard: e.cfg.GuardRails, RetryInitial: e.cfg.Retry.InitialInterval, RetryMax: e.cfg.Retry.MaxInterval,
		MaxAttempts: e.cfg.Retry.MaxAttempts, BlockedTimeout: e.cfg.EvictionTimeout,
	}, e.store, execs, e.console, fleet, e.audit)

	if e.cfg.LeaderElection.Enabled && cs != nil {
		e.elector = &leader.Elector{}
		id := identity()
		e.done.Add(1)
		go func() {
			defer e.done.Done()
			_ = e.elector.Run(runCtx, cs, e.cfg.LeaderElection, id, func(leading bool) {
				e.logger.Info("accelerator_remediation: leadership changed", zap.Bool("leading", leading), zap.String("identity", id))
				if leading {
					e.wake()
				}
			})
		}()
	}
	if !e.manual {
		e.done.Add(1)
		go e.loop(runCtx)
	}
	e.unregister = remediationplans.Register(e.set.ID, planSource{e})
	return nil
}

func (e *remediationExporter) bundleEvidence(p *plan.Plan) escalate.Evidence {
	since := e.now().Add(-e.cfg.Escalation.MetricsWindow)
	ev := e.evidence.of(p.Subject, since)
	for _, c := range e.nodeLabels.Since(p.Subject.Node, since) {
		ev.Changes = append(ev.Changes, escalate.Change{Time: c.Time, What: escalate.NodeLabelPrefix + c.Key, From: c.From, To: c.To})
	}
	slices.SortStableFunc(ev.Changes, func(a, b escalate.Change) int { return a.Time.Compare(b.Time) })
	return ev
}

// identity names this replica in the Lease: the pod name where the
// manifests set it, else the host name and process id.
func identity() string {
	if pod := os.Getenv("K8S_POD_NAME"); pod != "" {
		return pod
	}
	h, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", h, os.Getpid())
}

// leading reports whether this replica may act.
func (e *remediationExporter) leading() bool { return e.elector == nil || e.elector.Leading() }

func (e *remediationExporter) loop(ctx context.Context) {
	defer e.done.Done()
	t := time.NewTicker(e.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-e.wakeCh:
		}
		e.tick(ctx)
	}
}

func (e *remediationExporter) tick(ctx context.Context) {
	defer func() { e.audit.states(e.store.All()) }()
	if !e.refresh(ctx) {
		return
	}
	if !e.leading() {
		e.problems.Clear("plans")
		return // a standby reads the plans; it acts once it leads
	}
	e.joinDuplicates(ctx)
	if err := e.engine.Tick(ctx, e.now()); err != nil && ctx.Err() == nil {
		e.problems.Fail("plans", err)
		e.rlog.Error("tick", "accelerator_remediation: plans not advanced", zap.Error(err))
		return
	}
	e.problems.Clear("plans")
}

func (e *remediationExporter) Shutdown(ctx context.Context) error {
	if e.unregister != nil {
		e.unregister()
	}
	if e.cancel != nil {
		e.cancel()
		e.done.Wait()
	}
	var errs []error
	if e.storage != nil {
		errs = append(errs, e.storage.Close(ctx))
	}
	e.problems.Shutdown()
	e.telemetry.Shutdown()
	return errors.Join(errs...)
}

func storageClient(ctx context.Context, host component.Host, ext, self component.ID) (storage.Client, error) {
	x, ok := host.GetExtensions()[ext]
	if !ok {
		return nil, fmt.Errorf("accelerator_remediation: storage: extension %q is not running; add it under `extensions:` and to `service.extensions`", ext)
	}
	se, ok := x.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("accelerator_remediation: storage: extension %q is not a storage extension (use file_storage)", ext)
	}
	c, err := se.GetClient(ctx, component.KindExporter, self, "plans")
	if err != nil {
		return nil, fmt.Errorf("accelerator_remediation: storage: %q gave no client: %w", ext, err)
	}
	return c, nil
}

// unavailable is a step this build cannot carry out: it is skipped with
// the reason, which says what to do by hand.
type unavailable struct {
	step xid.Step
	why  string
}

func (u unavailable) Step() xid.Step                      { return u.step }
func (u unavailable) Applies(plan.Subject) (bool, string) { return false, u.why }
func (unavailable) Idempotent() bool                      { return true }
func (u unavailable) Run(context.Context, *plan.Plan, bool) (executor.Outcome, error) {
	return executor.Outcome{}, errors.New(u.why)
}
