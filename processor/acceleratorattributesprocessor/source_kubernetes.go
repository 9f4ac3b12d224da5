package acceleratorattributesprocessor

import (
	"context"
	"errors"
	"sync"

	"github.com/otelcol-accel/otelcol-accel/internal/k8sclient"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/kube"
)

// kubernetesSource watches the Kubernetes API for what PodResources does not
// say: pod labels, annotations, owners and UIDs, this node's labels, DRA
// ResourceClaims and ResourceSlices. It watches rather than polls: a change
// asks for a rebuild.
type kubernetesSource struct {
	cfg      KubernetesAPIConfig
	nodeName string
	registry *k8sclient.Registry

	w    *kube.Watcher // nil when the source could not start
	env  sourceEnv
	stop chan struct{}
	wg   sync.WaitGroup
}

const sourceAPI = "Kubernetes API"

// noNodeNameMessage names the fix when the API source cannot know its node.
const noNodeNameMessage = "node_name is empty, so the Kubernetes API source is off: set the K8S_NODE_NAME environment variable from the downward API " +
	"(env: [{name: K8S_NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]) or node_name, " +
	"or set kubernetes_api.enabled: false outside Kubernetes"

// withoutAPI says what attribution loses while the API source is down.
const withoutAPI = "; pods keep their names from PodResources but lose labels, owners, team and DRA claims"

func (s *kubernetesSource) name() string { return sourceAPI }

// answersLive: the watches already bring every change.
func (s *kubernetesSource) answersLive() bool { return false }

// start watches the node's objects. Nothing here fails the processor's
// start: an empty node name (the same agent config on a machine that is not
// a Kubernetes node), a client that cannot be built or a watch that cannot
// start only turn the source off, and say so.
func (s *kubernetesSource) start(ctx context.Context, env sourceEnv) error {
	s.env = env
	if s.nodeName == "" {
		env.report(errors.New(noNodeNameMessage))
		return nil
	}
	w, err := kube.NewWatcher(s.registry, s.cfg.APIConfig, s.nodeName, s.cfg.DRA)
	if err != nil {
		env.report(errors.New("cannot build a Kubernetes API client (" + err.Error() + ")" + withoutAPI))
		return nil
	}
	s.w = w
	if err := w.Start(ctx); err != nil {
		env.report(errors.New("cannot watch the Kubernetes API (" + err.Error() + ")" + withoutAPI))
	}
	s.stop = make(chan struct{})
	s.wg.Add(1)
	go s.forwardChanges()
	return nil
}

func (s *kubernetesSource) forwardChanges() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-s.w.Changed():
			s.env.changed()
		}
	}
}

// poll checks the watches.
func (s *kubernetesSource) poll(context.Context) {
	if s.w == nil {
		return
	}
	problems := s.w.Problems()
	if len(problems) == 0 {
		s.env.report(nil)
		return
	}
	msgs := make([]error, 0, len(problems))
	for _, pr := range problems {
		msgs = append(msgs, errors.New(pr.Hint+" ("+pr.Err.Error()+")"))
	}
	s.env.report(errors.New(errors.Join(msgs...).Error() + withoutAPI))
}

// contribute: the API's objects complete what the device sources say; alone
// they do not make a device nobody holds unallocated.
func (s *kubernetesSource) contribute(in *index.Input) holders {
	if s.w != nil {
		snap := s.w.Snapshot()
		in.Kube = &snap
	}
	return holdersNotTold
}

func (s *kubernetesSource) shutdown() error {
	if s.w == nil {
		return nil
	}
	close(s.stop)
	s.wg.Wait()
	s.w.Stop()
	return nil
}
