package acceleratordiagnosisprocessor

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/baseline"
	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/latencydiagnosis"
)

// warnEvery is how often one kind of problem is logged.
const warnEvery = time.Minute

// sourceStorage is the health source of the baselines' storage.
const sourceStorage = "baselines.storage"

type diagnosisProcessor struct {
	cfg        *Config
	id         component.ID
	version    string
	logger     *zap.Logger
	warn       *componenthealth.Logger
	status     *componenthealth.Problems
	thresholds latencydiagnosis.Thresholds
	// now is the wall clock (state TTLs); windows run on data time.
	now func() time.Time

	mu        sync.Mutex
	endpoints map[string]*endpoint
	// series holds the last cumulative value of each counter and histogram
	// series read, for deltas.
	series    map[string]*cumulative
	pods      map[string]*podState
	devices   map[string]*device
	children  map[string]map[string]struct{} // physical hw.id → consumer copies' hw.id
	workloads map[string]*workloadState
	baselines *baseline.Store
	// judged are the windows closed by the batch being processed.
	judged []judgement
	// scratch holds one histogram point's bucket increases.
	scratch    []float64
	lastExpiry time.Time

	logsMu sync.RWMutex
	logs   []consumer.Logs

	persisted *baseline.Persisted
}

func newDiagnosisProcessor(set processor.Settings, cfg *Config) *diagnosisProcessor {
	p := &diagnosisProcessor{
		cfg:        cfg,
		id:         set.ID,
		version:    set.BuildInfo.Version,
		logger:     set.Logger,
		thresholds: cfg.thresholds(),
		now:        time.Now,
		endpoints:  map[string]*endpoint{},
		series:     map[string]*cumulative{},
		pods:       map[string]*podState{},
		devices:    map[string]*device{},
		children:   map[string]map[string]struct{}{},
		workloads:  map[string]*workloadState{},
		baselines:  baseline.New(cfg.Baselines.HalfLife, cfg.Baselines.TTL, cfg.Baselines.MinSamples, cfg.Baselines.MaxEndpoints),
	}
	p.warn = componenthealth.NewLogger(set.Logger, warnEvery)
	p.status = componenthealth.NewProblems()
	return p
}

// addLogsConsumer registers where findings go: the next consumer of each
// logs pipeline this processor is in.
func (p *diagnosisProcessor) addLogsConsumer(c consumer.Logs) {
	p.logsMu.Lock()
	defer p.logsMu.Unlock()
	p.logs = append(p.logs, c)
}

// Start restores the baselines and starts the save loop.
func (p *diagnosisProcessor) Start(ctx context.Context, host component.Host) error {
	p.status.Start(host)
	if p.cfg.Baselines.Storage != nil {
		persisted, err := baseline.StartPersisted(ctx, host, baseline.PersistSettings{
			Store: p.baselines, Lock: &p.mu,
			What: "latency baselines", Key: baselinesKey,
			Extension: *p.cfg.Baselines.Storage, Self: p.id,
			SaveInterval: p.cfg.Baselines.SaveInterval, Now: p.now,
			Logger: p.logger, Warn: p.warn, Status: p.status, StatusSource: sourceStorage,
		})
		if err != nil {
			return err
		}
		p.persisted = persisted
	}
	return nil
}

// Shutdown stops the save loop and saves the baselines one last time.
func (p *diagnosisProcessor) Shutdown(ctx context.Context) error {
	defer p.status.Shutdown()
	if p.persisted == nil {
		return nil
	}
	err := p.persisted.Close(ctx)
	p.persisted = nil
	return err
}

// expire forgets state not seen within state_ttl (wall clock) and
// baselines past their TTL, at most once a window. Called with mu held.
func (p *diagnosisProcessor) expire(now time.Time) {
	if now.Sub(p.lastExpiry) < p.cfg.Window {
		return
	}
	p.lastExpiry = now
	ttl := p.cfg.StateTTL
	for k, e := range p.endpoints {
		if now.Sub(e.seen) > ttl {
			delete(p.endpoints, k)
		}
	}
	for k, c := range p.series {
		if now.Sub(c.seen) > ttl {
			delete(p.series, k)
		}
	}
	for k, ps := range p.pods {
		if now.Sub(ps.seen) > ttl {
			delete(p.pods, k)
		}
	}
	for k, d := range p.devices {
		if now.Sub(d.seen) > ttl {
			delete(p.devices, k)
			if kids := p.children[d.parent]; kids != nil {
				delete(kids, k)
				if len(kids) == 0 {
					delete(p.children, d.parent)
				}
			}
		}
	}
	for k, w := range p.workloads {
		if now.Sub(w.seen) > ttl+p.cfg.Recent {
			delete(p.workloads, k)
		}
	}
	p.baselines.Expire(now)
}
