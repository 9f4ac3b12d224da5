package acceleratorattributesprocessor

import (
	"context"

	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/nvmlmig"
)

// nvmlMIGSource asks the NVIDIA driver where each MIG UUID lives (parent
// GPU, GPU-instance id), so that dcgm-exporter's MIG series
// (<parent>/gi<N>) meet PodResources' MIG UUIDs without NVML-source data in
// the pipeline.
type nvmlMIGSource struct {
	open     func() (nvmlmig.Resolver, func(), error)
	resolver nvmlmig.Resolver
	close    func()
}

func (s *nvmlMIGSource) name() string         { return "NVML MIG lookup" }
func (s *nvmlMIGSource) answersLive() bool    { return false }
func (s *nvmlMIGSource) poll(context.Context) {}

// start loads NVML; without it (no driver, not an NVIDIA node) MIG devices
// are matched through NVML-source resources only, which is no error.
func (s *nvmlMIGSource) start(_ context.Context, env sourceEnv) error {
	r, closeFn, err := s.open()
	if err != nil {
		env.logger.Info("MIG devices from dcgm-exporter (hw.id <parent>/gi<N>) are matched to PodResources' MIG UUIDs only through NVML-source resources", zap.Error(err))
		return nil
	}
	s.resolver, s.close = r, closeFn
	return nil
}

// contribute: positions say where devices are, not who holds them.
func (s *nvmlMIGSource) contribute(in *index.Input) holders {
	if s.resolver != nil {
		in.MIG = s.resolver
	}
	return holdersNotTold
}

func (s *nvmlMIGSource) shutdown() error {
	if s.close != nil {
		s.close()
	}
	return nil
}
