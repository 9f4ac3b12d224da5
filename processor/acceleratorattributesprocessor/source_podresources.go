package acceleratorattributesprocessor

import (
	"context"
	"errors"
	"sync"

	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/podresources"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// podResourcesSource asks the kubelet's PodResources API which pod and
// container holds which device (List, Get for one pod), and how many
// replicas each shared device offers (GetAllocatableResources).
type podResourcesSource struct {
	socket string
	client *podresources.Client
	env    sourceEnv

	mu          sync.Mutex
	pods        []podresources.Pod
	ok          bool // the last List answered
	fails       int  // Lists failed in a row
	allocatable []podresources.Devices
	allocUnsup  bool
}

const sourceKubelet = "kubelet PodResources"

func (s *podResourcesSource) name() string      { return sourceKubelet }
func (s *podResourcesSource) answersLive() bool { return true }

// start makes the client; it connects lazily, so a kubelet that is not
// there yet is only a problem of the first poll.
func (s *podResourcesSource) start(_ context.Context, env sourceEnv) error {
	c, err := podresources.New(s.socket)
	if err != nil {
		return err
	}
	s.client, s.env = c, env
	return nil
}

func (s *podResourcesSource) poll(ctx context.Context) {
	pods, err := s.client.List(ctx)
	s.mu.Lock()
	if err != nil {
		s.fails++
		if s.fails >= staleAfter {
			s.pods = nil
		}
		s.ok = false
		s.mu.Unlock()
		s.env.report(errors.New(kubeletMessage(err)))
		return
	}
	s.pods, s.ok, s.fails = pods, true, 0
	unsupported := s.allocUnsup
	s.mu.Unlock()
	s.env.report(nil)

	if unsupported {
		return
	}
	alloc, err := s.client.Allocatable(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if podresources.KindOf(err) == podresources.KindUnsupported {
			s.allocUnsup = true
			s.env.logger.Info("kubelet PodResources GetAllocatableResources is not offered: replica counts of shared GPUs come from node labels or the replica ids seen", zap.Error(err))
		}
		return
	}
	s.allocatable = alloc
}

// getPod asks the kubelet for one pod that the last List did not have.
func (s *podResourcesSource) getPod(ctx context.Context, namespace, name string) bool {
	pod, err := s.client.Get(ctx, namespace, name)
	if err != nil {
		if podresources.KindOf(err) == podresources.KindUnsupported {
			s.poll(ctx) // old kubelet: List is all there is
			return true
		}
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	replaced := false
	for i := range s.pods {
		if s.pods[i].Namespace == namespace && s.pods[i].Name == name {
			s.pods[i], replaced = pod, true
		}
	}
	if !replaced {
		s.pods = append(s.pods, pod)
	}
	return true
}

func (s *podResourcesSource) contribute(in *index.Input) holders {
	s.mu.Lock()
	defer s.mu.Unlock()
	in.PodResources = s.pods
	// The last good answer is used for staleAfter refreshes while the
	// kubelet does not answer; it is not authoritative meanwhile.
	in.PodResourcesOK = s.ok || s.pods != nil
	in.Allocatable = s.allocatable
	if !s.ok {
		return holdersUnknown
	}
	return holdersAll
}

func (s *podResourcesSource) shutdown() error {
	if s.client == nil {
		return nil
	}
	return s.client.Close()
}

func kubeletMessage(err error) string {
	var perr *podresources.Error
	if errors.As(err, &perr) {
		msg := perr.Hint()
		if perr.Kind == podresources.KindSocketMissing || perr.Kind == podresources.KindPermission {
			msg += "; until then devices pass through without pod attribution"
		}
		return msg + " (" + err.Error() + ")"
	}
	return err.Error()
}
