package acceleratorattributesprocessor

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/ecs"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// ecsSource asks dockerd which ECS task's container holds which device
// (NVIDIA_VISIBLE_DEVICES, the task labels).
type ecsSource struct {
	socket string
	client *ecs.Client
	env    sourceEnv

	mu         sync.Mutex
	containers []ecs.Container
	ok         bool // the last answer came
}

const sourceECS = "ECS (Docker API)"

// ecsTimeout bounds one refresh's Docker API calls.
const ecsTimeout = 10 * time.Second

func (s *ecsSource) name() string      { return sourceECS }
func (s *ecsSource) answersLive() bool { return true }

func (s *ecsSource) start(_ context.Context, env sourceEnv) error {
	s.client, s.env = ecs.New(s.socket, ecsTimeout), env
	return nil
}

func (s *ecsSource) poll(ctx context.Context) {
	cts, err := s.client.Containers(ctx)
	s.mu.Lock()
	if err != nil {
		s.ok = false
		s.mu.Unlock()
		s.env.report(errors.New(ecsMessage(err)))
		return
	}
	s.containers, s.ok = cts, true
	s.mu.Unlock()
	s.env.report(nil)
}

func (s *ecsSource) contribute(in *index.Input) holders {
	s.mu.Lock()
	defer s.mu.Unlock()
	in.ECS, in.ECSOK = s.containers, s.ok
	if !s.ok {
		return holdersUnknown
	}
	return holdersAll
}

func (s *ecsSource) shutdown() error { return nil }

func ecsMessage(err error) string {
	var e *ecs.Error
	if errors.As(err, &e) && e.Hint != "" {
		return e.Hint + " (" + err.Error() + ")"
	}
	return err.Error()
}
