package acceleratorcostprocessor

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/baseline"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/pricing"
)

// warnEvery is how often one kind of problem (a missing price row, a broken
// pricing file, a failing logs consumer) is logged.
const warnEvery = 10 * time.Minute

// Sources, as the status names them.
const (
	sourcePricing = "pricing files"
	sourceStorage = "baselines storage"
)

// costProcessor is the one instance behind both the metrics and the logs
// pipeline of a component ID.
type costProcessor struct {
	cfg     *Config
	id      component.ID
	version string
	logger  *zap.Logger
	now     func() time.Time
	warn    *componenthealth.Logger
	// status: a pricing file that keeps failing to reload and a baselines
	// storage that cannot be read or written, each until it works again.
	status *componenthealth.Problems

	prices atomic.Pointer[pricing.Watcher]

	mu        sync.Mutex
	resources map[uint64]*resourceState
	parents   map[string]*parentState
	pods      map[string]*podSignals
	health    map[string]*healthState
	workloads map[string]map[string]time.Time // workload → pods (replicas) → last seen
	baselines *baseline.Store
	lastSweep time.Time
	batch     uint64
	scratch   []observation
	touched   []*parentState
	// deviceSignals: the batch's device resources by hw.id, for the
	// consumer copies of shared devices (joinDevices).
	deviceSignals map[string]*signals

	logsMu sync.RWMutex
	logs   []consumer.Logs

	persisted *baseline.Persisted
	stop      chan struct{}
	wg        sync.WaitGroup
}

func newCostProcessor(set processor.Settings, cfg *Config) *costProcessor {
	p := &costProcessor{
		cfg:       cfg,
		id:        set.ID,
		version:   set.BuildInfo.Version,
		logger:    set.Logger,
		now:       time.Now,
		resources: map[uint64]*resourceState{},
		parents:   map[string]*parentState{},
		pods:      map[string]*podSignals{},
		health:    map[string]*healthState{},
		workloads: map[string]map[string]time.Time{},
		baselines: baseline.New(cfg.Baselines.HalfLife, cfg.Baselines.TTL, cfg.Baselines.MinSamples, cfg.Baselines.MaxEntries),
	}
	p.warn = componenthealth.NewLogger(set.Logger, warnEvery)
	p.warn.SetClock(func() time.Time { return p.now() })
	p.status = componenthealth.NewProblems()
	return p
}

// addLogsConsumer registers where findings go: the next consumer of each
// logs pipeline this processor is in.
func (p *costProcessor) addLogsConsumer(c consumer.Logs) {
	p.logsMu.Lock()
	defer p.logsMu.Unlock()
	p.logs = append(p.logs, c)
}

// Start loads the price table (failing on a malformed one), restores the
// training baselines and starts the reload and save loops.
func (p *costProcessor) Start(ctx context.Context, host component.Host) error {
	p.status.Start(host)
	w, err := pricing.NewWatcher(p.cfg.Pricing.Files, p.cfg.pricingOptions())
	if err != nil {
		return fmt.Errorf("pricing: %w", err)
	}
	p.prices.Store(w)
	p.logger.Info("price table loaded",
		zap.Int("rows", w.Table().Len()), zap.Strings("files", p.cfg.Pricing.Files),
		zap.String("default_region", w.Table().DefaultRegionName()))

	if p.cfg.Baselines.Storage != nil {
		persisted, err := baseline.StartPersisted(ctx, host, baseline.PersistSettings{
			Store: p.baselines, Lock: &p.mu,
			What: "training baselines", Key: baselinesKey,
			Extension: *p.cfg.Baselines.Storage, Self: p.id,
			SaveInterval: p.cfg.Baselines.SaveInterval, Now: p.now,
			Logger: p.logger, Warn: p.warn, Status: p.status, StatusSource: sourceStorage,
		})
		if err != nil {
			return err
		}
		p.persisted = persisted
	}

	p.stop = make(chan struct{})
	if p.cfg.Pricing.ReloadInterval > 0 && len(p.cfg.Pricing.Files) > 0 {
		p.wg.Add(1)
		go p.reloadLoop(w)
	}
	return nil
}

// Shutdown stops the loops and saves the baselines one last time.
func (p *costProcessor) Shutdown(ctx context.Context) error {
	if p.stop != nil {
		close(p.stop)
		p.wg.Wait()
		p.stop = nil
	}
	defer p.status.Shutdown()
	if p.persisted == nil {
		return nil
	}
	err := p.persisted.Close(ctx)
	p.persisted = nil
	return err
}

func (p *costProcessor) reloadLoop(w *pricing.Watcher) {
	defer p.wg.Done()
	ticker := time.NewTicker(p.cfg.Pricing.ReloadInterval)
	defer ticker.Stop()
	pending := "" // an error seen once, not yet reported
	for {
		select {
		case <-p.stop:
			return
		case <-ticker.C:
		}
		changed, err := w.Poll()
		if err != nil {
			// Report a broken table only when the next poll finds it broken
			// the same way: an editor or a copy half-way through writing the
			// file is not an error yet.
			if msg := err.Error(); msg != pending {
				pending = msg
				continue
			}
			p.warn.Error("pricing-reload\x00"+err.Error(), "pricing file rejected; still using the previous price table (fix the file, it is re-read every reload_interval)",
				zap.Error(err))
			p.status.Fail(sourcePricing, err)
			continue
		}
		pending = ""
		if changed {
			p.logger.Info("price table reloaded", zap.Int("rows", w.Table().Len()))
		}
		p.status.Clear(sourcePricing)
	}
}
