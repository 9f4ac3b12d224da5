package acceleratorattributesprocessor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/cgroup"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/nvmlmig"
)

const (
	// logInterval is how often one persisting problem is logged again.
	logInterval = 5 * time.Minute
	// minKickInterval spaces early refreshes triggered by unknown devices.
	minKickInterval = 2 * time.Second
	// kickPerKey is how often one unknown device may trigger a refresh.
	kickPerKey = time.Minute
	// pidTTL is how long a pid's pod is trusted before /proc is read again.
	pidTTL = time.Minute
	// staleAfter: holders from the last good kubelet answer are kept while
	// the kubelet does not answer, for this many refresh intervals.
	staleAfter = 6
	// topologyPeriods: something learned from resources is forgotten when
	// not seen for this many refresh intervals (×2, see rotateTopology).
	topologyPeriods = 30
)

// attributesProcessor is shared by the metrics and logs pipelines of one ID.
type attributesProcessor struct {
	cfg    *Config
	logger *zap.Logger
	rl     *componenthealth.Logger
	tel    component.TelemetrySettings
	// version is the collector's, for the scope of the series this
	// processor adds (the allocation series).
	version string

	// registry holds the informers shared with the other components of the
	// agent (tests use one of their own over client-go fakes).
	registry *k8sclient.Registry
	// openMIG opens NVML (tests inject go-nvml mocks).
	openMIG func() (nvmlmig.Resolver, func(), error)

	idx   atomic.Pointer[index.Index]
	built *index.Input // what idx was built from (under mu)
	topo  topologyState
	pids  *cgroup.Resolver
	infer inferenceState

	// sources are set by Start (sources.go); live: one of them answers for
	// the moment it is asked, so an unknown device is worth an early
	// refresh; podGetters can be asked for one pod.
	sources    []source
	live       bool
	podGetters []podGetter
	problems   *componenthealth.Problems

	mu          sync.Mutex // guards lastRefresh and rebuilds
	lastRefresh time.Time

	kick    chan struct{}
	getPod  chan [2]string
	changed chan struct{}
	// kicks lets each unknown device or pod ask for an early refresh or a
	// fetch once per kickPerKey.
	kicks *componenthealth.Limiter

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newAttributesProcessor(cfg *Config, tel component.TelemetrySettings) *attributesProcessor {
	p := &attributesProcessor{
		cfg:      cfg,
		logger:   tel.Logger,
		rl:       componenthealth.NewLogger(tel.Logger, logInterval),
		tel:      tel,
		registry: k8sclient.Shared(),
		openMIG: func() (nvmlmig.Resolver, func(), error) {
			n, err := nvmlmig.Open()
			if err != nil {
				return nil, nil, err
			}
			return n, func() { _ = n.Close() }, nil
		},
		pids:     cgroup.NewResolver(cfg.ProcRoot, pidTTL),
		problems: componenthealth.NewProblems(componenthealth.WithSummary("accelerator_attributes degraded")),
		kick:     make(chan struct{}, 1),
		getPod:   make(chan [2]string, 16),
		changed:  make(chan struct{}, 1),
		kicks:    componenthealth.NewLimiter(kickPerKey),
	}
	p.idx.Store(index.Empty())
	p.topo.init()
	p.infer.init()
	return p
}

// Start opens the sources and runs the first refresh. Missing sources do
// not fail the start: they degrade the status and are retried.
func (p *attributesProcessor) Start(ctx context.Context, host component.Host) error {
	p.problems.Start(host)
	// One status for where the start ends, not one per source.
	release := p.problems.Hold()
	defer release()
	runCtx, cancel := context.WithCancel(context.Background())
	if err := p.startSources(runCtx); err != nil {
		cancel()
		p.problems.Shutdown()
		return err
	}
	p.cancel = cancel
	// The first refresh is synchronous but bounded, so the first batches
	// are already attributed on a healthy node.
	first, cancelFirst := context.WithTimeout(ctx, 5*time.Second)
	p.refresh(first)
	cancelFirst()

	p.wg.Add(1)
	go p.loop(runCtx)
	return nil
}

// Shutdown stops the refresh loop and closes every source.
func (p *attributesProcessor) Shutdown(context.Context) error {
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	p.problems.Shutdown()
	return p.shutdownSources()
}

// requestRefresh asks the loop for an early refresh because hwID is not
// known; each id asks at most once a minute.
func (p *attributesProcessor) requestRefresh(hwID string) {
	if !p.live || !p.kicks.Allow(hwID) {
		return
	}
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// requestPod asks the loop to fetch one pod from the sources that can be
// asked for one (the kubelet's Get).
func (p *attributesProcessor) requestPod(ns, name string) {
	if len(p.podGetters) == 0 || !p.kicks.Allow("pod/"+ns+"/"+name) {
		return
	}
	select {
	case p.getPod <- [2]string{ns, name}:
	default:
	}
}
