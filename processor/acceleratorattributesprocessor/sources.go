package acceleratorattributesprocessor

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/componenthealth"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// source is one place the processor learns who holds the node's devices, or
// what it knows of them: the kubelet's PodResources, the Kubernetes API,
// dockerd on ECS, a mapping file, NVML's MIG table. Each is a small type
// behind this interface, one per file (source_*.go), as contrib's
// resourcedetectionprocessor has one Detector per platform; the processor's
// loop iterates them and never asks which one it has.
type source interface {
	// name names the source in status and log lines ("kubelet PodResources").
	name() string
	// start opens the source for the processor's life: run ends at
	// Shutdown. An error fails the processor's start, for what must be
	// fixed before it can run (a mapping file it cannot read); a source
	// that is only unavailable says so through env.report and is retried.
	start(run context.Context, env sourceEnv) error
	// poll asks the source again; every refresh calls it. A watched source
	// checks its watches here.
	poll(ctx context.Context)
	// contribute adds the source's last answer to the index input, and says
	// what that answer tells of the devices nobody in it holds. It runs
	// under the processor's rebuild lock, beside poll: a source guards its
	// own answer.
	contribute(in *index.Input) holders
	// answersLive: the source answers for the moment it is asked (the
	// kubelet, dockerd), so a device nobody knows is worth asking it again
	// before the next refresh: what holds it may have just started.
	answersLive() bool
	// shutdown closes what start opened.
	shutdown() error
}

// podGetter is a source that can be asked for one pod by name (the
// kubelet's Get), for a pod a device's hint names that its last answer did
// not have.
type podGetter interface {
	// getPod asks for the pod; true when the source's answer changed.
	getPod(ctx context.Context, namespace, name string) bool
}

// holders is what a source's answer tells of the devices nobody in it holds.
type holders int

const (
	// holdersNotTold: the source does not say who holds devices (pod
	// metadata, MIG positions).
	holdersNotTold holders = iota
	// holdersAll: the answer names every holder of the node's devices.
	holdersAll
	// holdersUnknown: the source names holders, but has no current answer.
	holdersUnknown
)

// sourceEnv is what a source gets from the processor.
type sourceEnv struct {
	logger *zap.Logger
	rl     *componenthealth.Logger
	// report says whether the source works: nil, or what is wrong and how
	// to fix it. The processor's status and log name the source.
	report func(error)
	// changed says that what the source contributes changed between polls
	// (a watch event): the index is rebuilt soon.
	changed func()
}

// newSources lists the sources the configuration turns on, in the order
// they are started.
func (p *attributesProcessor) newSources() []source {
	cfg := p.cfg
	var list []source
	if cfg.Static.File != "" {
		list = append(list, &staticSource{path: cfg.Static.File, reload: cfg.Static.ReloadInterval > 0})
	}
	if cfg.PodResourcesSocket != "" {
		list = append(list, &podResourcesSource{socket: cfg.PodResourcesSocket})
	}
	if cfg.KubernetesAPI.Enabled {
		list = append(list, &kubernetesSource{cfg: cfg.KubernetesAPI, nodeName: cfg.NodeName, registry: p.registry})
	}
	if cfg.ECS.Enabled {
		list = append(list, &ecsSource{socket: cfg.ECS.DockerSocket})
	}
	if cfg.MIGLookup == migLookupNVML {
		list = append(list, &nvmlMIGSource{open: p.openMIG})
	}
	return list
}

// startSources starts every source; when one fails, those started before it
// are shut down again.
func (p *attributesProcessor) startSources(run context.Context) error {
	list := p.newSources()
	for i, s := range list {
		env := sourceEnv{logger: p.logger, rl: p.rl, report: p.reporter(s.name()), changed: p.sourceChanged}
		if err := s.start(run, env); err != nil {
			for _, started := range list[:i] {
				_ = started.shutdown()
			}
			return err
		}
	}
	p.sources = list
	for _, s := range list {
		if s.answersLive() {
			p.live = true
		}
		if g, ok := s.(podGetter); ok {
			p.podGetters = append(p.podGetters, g)
		}
	}
	return nil
}

// shutdownSources closes every source.
func (p *attributesProcessor) shutdownSources() error {
	var errs []error
	for _, s := range p.sources {
		errs = append(errs, s.shutdown())
	}
	return errors.Join(errs...)
}

// sourceChanged asks the loop for a rebuild (coalesced, debounced there).
func (p *attributesProcessor) sourceChanged() {
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// contributeSources fills in what every source knows. Unheld devices are
// unallocated (and cost money) rather than unknown only when some source
// names holders and every such source answered.
func (p *attributesProcessor) contributeSources(in *index.Input) {
	told, unknown := false, false
	for _, s := range p.sources {
		switch s.contribute(in) {
		case holdersAll:
			told = true
		case holdersUnknown:
			unknown = true
		}
	}
	in.Authoritative = told && !unknown
}

// fetchPod asks the sources that can for one pod a hint names (it may have
// just started), and rebuilds when one had news.
func (p *attributesProcessor) fetchPod(ctx context.Context, namespace, name string) {
	changed := false
	for _, g := range p.podGetters {
		if g.getPod(ctx, namespace, name) {
			changed = true
		}
	}
	if changed {
		p.rebuild()
	}
}

// loop refreshes every refresh_interval and early when a batch asks for it,
// fetches the pods hints name, and rebuilds after watch events.
func (p *attributesProcessor) loop(ctx context.Context) {
	defer p.wg.Done()
	tick := time.NewTicker(p.cfg.RefreshInterval)
	defer tick.Stop()
	// Watch events arrive in bursts (a rollout); rebuild at most once a
	// second.
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
			if refreshes%topologyPeriods == 0 && p.topo.rotate() {
				p.rebuild()
			}
		case <-p.kick:
			p.mu.Lock()
			recent := time.Since(p.lastRefresh) < minKickInterval
			p.mu.Unlock()
			if !recent {
				p.refresh(ctx)
			}
		case nsName := <-p.getPod:
			p.fetchPod(ctx, nsName[0], nsName[1])
		case <-p.changed:
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

// refresh asks every source again, then rebuilds.
func (p *attributesProcessor) refresh(ctx context.Context) {
	release := p.problems.Hold()
	defer release()
	for _, s := range p.sources {
		s.poll(ctx)
	}
	p.mu.Lock()
	p.lastRefresh = time.Now()
	p.mu.Unlock()
	p.rebuildIf(true)
}
