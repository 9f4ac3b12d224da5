package acceleratorattributesprocessor

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	"github.com/otelcol-accel/otelcol-accel/internal/ratelog"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/cgroup"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/ecs"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/kube"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/nvmlmig"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/static"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/workload"
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
	rl     *ratelog.Logger
	tel    component.TelemetrySettings

	// registry holds the informers shared with the other components of the
	// agent (tests use one of their own over client-go fakes).
	registry *k8sclient.Registry
	// openMIG opens NVML (tests inject go-nvml mocks).
	openMIG func() (nvmlmig.Resolver, func(), error)

	idx   atomic.Pointer[index.Index]
	topo  topologyState
	pids  *cgroup.Resolver
	infer inferenceState

	pr         *podresources.Client
	kw         *kube.Watcher
	docker     *ecs.Client
	staticFile *static.File
	mig        nvmlmig.Resolver
	migClose   func()

	mu  sync.Mutex // guards src and rebuilds
	src sourceSnapshot

	statusMu sync.Mutex
	problems map[string]problem
	reported string
	host     component.Host

	kick     chan struct{}
	getPod   chan [2]string
	kickMu   sync.Mutex
	kickedAt map[string]time.Time

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// sourceSnapshot is the last answer of each polled source.
type sourceSnapshot struct {
	pods        []podresources.Pod
	podsOK      bool
	podsFails   int
	allocatable []podresources.Devices
	allocUnsup  bool
	ecs         []ecs.Container
	ecsOK       bool
	staticRows  []static.Row
	lastRefresh time.Time
}

func newAttributesProcessor(cfg *Config, tel component.TelemetrySettings) *attributesProcessor {
	p := &attributesProcessor{
		cfg:      cfg,
		logger:   tel.Logger,
		rl:       ratelog.New(tel.Logger, logInterval),
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
		problems: map[string]problem{},
		kick:     make(chan struct{}, 1),
		getPod:   make(chan [2]string, 16),
		kickedAt: map[string]time.Time{},
	}
	p.idx.Store(index.Empty())
	p.topo.init()
	p.infer.init()
	return p
}

// noNodeNameMessage names the fix when the API source cannot know its node.
const noNodeNameMessage = "node_name is empty, so the Kubernetes API source is off: set the K8S_NODE_NAME environment variable from the downward API " +
	"(env: [{name: K8S_NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]) or node_name, " +
	"or set kubernetes_api.enabled: false outside Kubernetes"

// Start opens the sources and runs the first refresh. Missing sources do
// not fail the start: they degrade the status and are retried.
func (p *attributesProcessor) Start(ctx context.Context, host component.Host) error {
	p.statusMu.Lock()
	p.host = host
	p.statusMu.Unlock()
	cfg := p.cfg
	if cfg.Static.File != "" {
		f, err := static.Open(cfg.Static.File)
		if err != nil {
			return err
		}
		p.staticFile = f
	}
	if cfg.PodResourcesSocket != "" {
		c, err := podresources.New(cfg.PodResourcesSocket)
		if err != nil {
			return err
		}
		p.pr = c
	}
	// An empty node name is not a startup error: the same agent config runs
	// on machines that are not Kubernetes nodes, where the API source is
	// simply unavailable.
	if cfg.KubernetesAPI.Enabled && cfg.NodeName == "" {
		p.setProblem(sourceAPI, noNodeNameMessage)
	} else if cfg.KubernetesAPI.Enabled {
		kw, err := kube.NewWatcher(p.registry, cfg.KubernetesAPI.APIConfig, cfg.NodeName, cfg.KubernetesAPI.DRA)
		if err != nil {
			p.setProblem(sourceAPI, "cannot build a Kubernetes API client ("+err.Error()+"); pods keep their names from PodResources but lose labels, owners, team and DRA claims")
		} else {
			p.kw = kw
		}
	}
	if cfg.ECS.Enabled {
		p.docker = ecs.New(cfg.ECS.DockerSocket, 10*time.Second)
	}
	if cfg.MIGLookup == migLookupNVML {
		if r, closeFn, err := p.openMIG(); err == nil {
			p.mig, p.migClose = r, closeFn
		} else {
			p.logger.Info("MIG devices from dcgm-exporter (hw.id <parent>/gi<N>) are matched to PodResources' MIG UUIDs only through NVML-source resources", zap.Error(err))
		}
	}

	runCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	if p.kw != nil {
		if err := p.kw.Start(); err != nil {
			p.setProblem(sourceAPI, "cannot watch the Kubernetes API ("+err.Error()+"); pods keep their names from PodResources but lose labels, owners, team and DRA claims")
		}
	}
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
	if p.kw != nil {
		p.kw.Stop()
	}
	var err error
	if p.pr != nil {
		err = p.pr.Close()
	}
	if p.migClose != nil {
		p.migClose()
	}
	return err
}

func (p *attributesProcessor) loop(ctx context.Context) {
	defer p.wg.Done()
	tick := time.NewTicker(p.cfg.RefreshInterval)
	defer tick.Stop()
	var changed <-chan struct{}
	if p.kw != nil {
		changed = p.kw.Changed()
	}
	// API events arrive in bursts (a rollout); rebuild at most once a second.
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	rebuildPending := false
	refreshes := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			p.refresh(ctx)
			refreshes++
			p.pids.Prune()
			p.pruneKicks()
			if refreshes%topologyPeriods == 0 && p.topo.rotate() {
				p.rebuild()
			}
		case <-p.kick:
			p.mu.Lock()
			recent := time.Since(p.src.lastRefresh) < minKickInterval
			p.mu.Unlock()
			if !recent {
				p.refresh(ctx)
			}
		case nsName := <-p.getPod:
			p.fetchPod(ctx, nsName[0], nsName[1])
		case <-changed:
			if !rebuildPending {
				rebuildPending = true
				debounce.Reset(time.Second)
			}
		case <-debounce.C:
			rebuildPending = false
			p.rebuild()
		}
	}
}

// refresh polls the kubelet, dockerd and the mapping file, then rebuilds.
func (p *attributesProcessor) refresh(ctx context.Context) {
	if p.pr != nil {
		p.refreshKubelet(ctx)
	}
	if p.docker != nil {
		p.refreshECS(ctx)
	}
	if p.staticFile != nil {
		p.refreshStatic()
	}
	if p.kw != nil {
		p.checkAPI()
	}
	p.mu.Lock()
	p.src.lastRefresh = time.Now()
	p.mu.Unlock()
	p.rebuild()
	p.reportStatus()
}

func (p *attributesProcessor) refreshKubelet(ctx context.Context) {
	pods, err := p.pr.List(ctx)
	p.mu.Lock()
	if err != nil {
		p.src.podsFails++
		if p.src.podsFails >= staleAfter {
			p.src.pods = nil
		}
		p.src.podsOK = false
		p.mu.Unlock()
		p.setProblem(sourceKubelet, kubeletMessage(err))
		return
	}
	p.src.pods, p.src.podsOK, p.src.podsFails = pods, true, 0
	unsupported := p.src.allocUnsup
	p.mu.Unlock()
	p.clearProblem(sourceKubelet)

	if unsupported {
		return
	}
	alloc, err := p.pr.Allocatable(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if podresources.KindOf(err) == podresources.KindUnsupported {
			p.src.allocUnsup = true
			p.logger.Info("kubelet PodResources GetAllocatableResources is not offered: replica counts of shared GPUs come from node labels or the replica ids seen", zap.Error(err))
		}
		return
	}
	p.src.allocatable = alloc
}

// fetchPod asks the kubelet for one pod named by a dcgm-exporter hint that
// the last List did not have (it may have just started).
func (p *attributesProcessor) fetchPod(ctx context.Context, ns, name string) {
	if p.pr == nil {
		return
	}
	pod, err := p.pr.Get(ctx, ns, name)
	if err != nil {
		if podresources.KindOf(err) == podresources.KindUnsupported {
			p.refreshKubelet(ctx) // old kubelet: List is all there is
			p.rebuild()
		}
		return
	}
	p.mu.Lock()
	replaced := false
	for i := range p.src.pods {
		if p.src.pods[i].Namespace == ns && p.src.pods[i].Name == name {
			p.src.pods[i], replaced = pod, true
		}
	}
	if !replaced {
		p.src.pods = append(p.src.pods, pod)
	}
	p.mu.Unlock()
	p.rebuild()
}

func (p *attributesProcessor) refreshECS(ctx context.Context) {
	cts, err := p.docker.Containers(ctx)
	p.mu.Lock()
	if err != nil {
		p.src.ecsOK = false
		p.mu.Unlock()
		p.setProblem(sourceECS, ecsMessage(err))
		return
	}
	p.src.ecs, p.src.ecsOK = cts, true
	p.mu.Unlock()
	p.clearProblem(sourceECS)
}

func (p *attributesProcessor) refreshStatic() {
	if p.cfg.Static.ReloadInterval > 0 {
		changed, err := p.staticFile.Reload()
		if err != nil {
			p.rl.Error("static-reload", "accelerator_attributes: static mapping reload failed", zap.Error(err))
		} else if changed {
			p.logger.Info("accelerator_attributes: static mapping reloaded", zap.String("file", p.cfg.Static.File), zap.Int("rows", len(p.staticFile.Rows())))
		}
	}
	p.mu.Lock()
	p.src.staticRows = p.staticFile.Rows()
	p.mu.Unlock()
}

func (p *attributesProcessor) checkAPI() {
	problems := p.kw.Problems()
	if len(problems) == 0 {
		p.clearProblem(sourceAPI)
		return
	}
	msgs := make([]error, 0, len(problems))
	for _, pr := range problems {
		msgs = append(msgs, errors.New(pr.Hint+" ("+pr.Err.Error()+")"))
	}
	p.setProblem(sourceAPI, errors.Join(msgs...).Error()+"; pods keep their names from PodResources but lose labels, owners, team and DRA claims")
}

// rebuild makes a new index from the last source answers and the current
// topology, and swaps it in.
func (p *attributesProcessor) rebuild() {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := index.Input{
		NodeName:     p.cfg.NodeName,
		ClusterName:  p.cfg.ClusterName,
		HostNames:    hostNames(p.cfg.NodeName),
		PodResources: p.src.pods,
		// The last good answer is used for staleAfter refreshes while the
		// kubelet does not answer; it is not authoritative meanwhile.
		PodResourcesOK: p.src.podsOK || p.src.pods != nil,
		Allocatable:    p.src.allocatable,
		ECS:            p.src.ecs,
		ECSOK:          p.src.ecsOK,
		Static:         p.src.staticRows,
		Topology:       p.topo.current(),
		MIG:            p.mig,
		Workload:       p.workloadConfig(),
		InferencePods:  p.infer.snapshot(),

		PlaceholderNamespaces: p.cfg.PlaceholderNamespaces,
	}
	if p.kw != nil {
		snap := p.kw.Snapshot()
		in.Kube = &snap
	}
	in.Authoritative = p.authoritative()
	ix := index.Build(in)
	p.idx.Store(ix)
	for pod, v := range ix.InvalidWorkloadTypes {
		p.rl.Warn("workload-type/"+pod, "accelerator_attributes: workload type label is not one of training, inference, batch, interactive, unknown; the pod counts as unknown",
			zap.String("pod", pod), zap.String("value", v))
	}
	for _, sp := range ix.SliceProblems {
		p.rl.Error("dra-slice/"+sp.Slice+"/"+sp.Device, "accelerator_attributes: ResourceSlice device cannot be tied to a GPU; claims on it stay unattributed",
			zap.String("resourceslice", sp.Slice), zap.String("driver", sp.Driver), zap.String("pool", sp.Pool),
			zap.String("device", sp.Device), zap.String("problem", sp.Reason))
	}
	if live := ix.Stats.Pods; live > 0 {
		p.infer.retain(ix)
	}
}

// authoritative: every enabled device source answered, so a device that
// nobody holds is unallocated (and costs money) rather than unknown.
func (p *attributesProcessor) authoritative() bool {
	enabled := false
	if p.pr != nil {
		if !p.src.podsOK {
			return false
		}
		enabled = true
	}
	if p.docker != nil {
		if !p.src.ecsOK {
			return false
		}
		enabled = true
	}
	if p.staticFile != nil {
		enabled = true
	}
	return enabled
}

func (p *attributesProcessor) workloadConfig() workload.Config {
	c := p.cfg
	return workload.Config{
		TeamLabels:              c.Team.Labels,
		TeamAnnotations:         c.Team.Annotations,
		WorkloadNameLabels:      c.WorkloadName.Labels,
		WorkloadNameAnnotations: c.WorkloadName.Annotations,
		WorkloadTypeLabels:      c.WorkloadType.Labels,
		WorkloadTypeAnnotations: c.WorkloadType.Annotations,
		InferWorkloadType:       c.WorkloadType.Infer,
		PodLabels:               c.PodLabels,
	}
}

func hostNames(nodeName string) []string {
	names := []string{}
	if nodeName != "" {
		names = append(names, nodeName)
	}
	if h, err := os.Hostname(); err == nil {
		names = append(names, h)
	}
	return names
}

// requestRefresh asks the loop for an early refresh because hwID is not
// known; each id asks at most once a minute.
func (p *attributesProcessor) requestRefresh(hwID string) {
	if p.pr == nil && p.docker == nil {
		return
	}
	now := time.Now()
	p.kickMu.Lock()
	last, ok := p.kickedAt[hwID]
	if ok && now.Sub(last) < kickPerKey {
		p.kickMu.Unlock()
		return
	}
	p.kickedAt[hwID] = now
	p.kickMu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// requestPod asks the loop to fetch one pod from the kubelet (Get).
func (p *attributesProcessor) requestPod(ns, name string) {
	if p.pr == nil {
		return
	}
	key := "pod/" + ns + "/" + name
	now := time.Now()
	p.kickMu.Lock()
	if last, ok := p.kickedAt[key]; ok && now.Sub(last) < kickPerKey {
		p.kickMu.Unlock()
		return
	}
	p.kickedAt[key] = now
	p.kickMu.Unlock()
	select {
	case p.getPod <- [2]string{ns, name}:
	default:
	}
}

func (p *attributesProcessor) pruneKicks() {
	now := time.Now()
	p.kickMu.Lock()
	defer p.kickMu.Unlock()
	for k, t := range p.kickedAt {
		if now.Sub(t) > 2*kickPerKey {
			delete(p.kickedAt, k)
		}
	}
}
