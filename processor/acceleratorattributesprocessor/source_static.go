package acceleratorattributesprocessor

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/static"
)

// staticSource is a mapping file that says who uses which device where no
// orchestrator can (Slurm, bare metal).
type staticSource struct {
	path   string
	reload bool // static.reload_interval > 0
	file   *static.File
	env    sourceEnv
}

func (s *staticSource) name() string { return "static mapping file" }

// answersLive: the file changes when someone edits it, not because a batch
// names a device it does not list.
func (s *staticSource) answersLive() bool { return false }

// start reads the file: a mapping that cannot be read, or has a malformed
// line, fails the processor's start with the file and line.
func (s *staticSource) start(_ context.Context, env sourceEnv) error {
	f, err := static.Open(s.path)
	if err != nil {
		return fmt.Errorf("static.file: %w", err)
	}
	s.file, s.env = f, env
	return nil
}

// poll re-reads the file when it changed; a bad edit keeps the last good
// mapping and is logged, rate-limited.
func (s *staticSource) poll(context.Context) {
	if !s.reload {
		return
	}
	changed, err := s.file.Reload()
	if err != nil {
		s.env.rl.Error("static-reload", "accelerator_attributes: static mapping reload failed", zap.Error(err))
	} else if changed {
		s.env.logger.Info("accelerator_attributes: static mapping reloaded", zap.String("file", s.path), zap.Int("rows", len(s.file.Rows())))
	}
}

// contribute: the file names every holder it knows of, always.
func (s *staticSource) contribute(in *index.Input) holders {
	in.Static = s.file.Rows()
	return holdersAll
}

func (s *staticSource) shutdown() error { return nil }
