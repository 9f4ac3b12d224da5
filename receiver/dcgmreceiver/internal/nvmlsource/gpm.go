package nvmlsource

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/otelcol-accel/otelcol-accel/receiver/dcgmreceiver/internal/model"
)

// gpmMetrics are the GPM (GPU Performance Monitoring, Hopper and newer)
// metrics read, in percent, and where they go: the NVML-only equivalents of
// DCGM's profiling fields.
var gpmMetrics = [...]struct {
	id    nvml.GpmMetricId
	store func(s *model.Sample) *model.Value
}{
	{nvml.GPM_METRIC_GRAPHICS_UTIL, func(s *model.Sample) *model.Value { return &s.GREngineActive }},
	{nvml.GPM_METRIC_SM_UTIL, func(s *model.Sample) *model.Value { return &s.SMActive }},
	{nvml.GPM_METRIC_SM_OCCUPANCY, func(s *model.Sample) *model.Value { return &s.SMOccupancy }},
	{nvml.GPM_METRIC_ANY_TENSOR_UTIL, func(s *model.Sample) *model.Value { return &s.TensorActive }},
	{nvml.GPM_METRIC_DRAM_BW_UTIL, func(s *model.Sample) *model.Value { return &s.DRAMActive }},
}

// gpmPair holds the sample taken at the previous scrape: each scrape takes a
// new one and computes the metrics over the interval between the two, so
// the values cover the whole collection interval (the first scrape has
// none).
type gpmPair struct {
	prev, cur nvml.GpmSample
	have      bool
}

func (p *gpmPair) free() {
	if p.prev != nil {
		_ = p.prev.Free()
	}
	if p.cur != nil {
		_ = p.cur.Free()
	}
	*p = gpmPair{}
}

// readGPM takes a sample with get and, when there is a previous one, stores
// the metrics in smp. Called with s.mu held (s.metrics is shared).
func (s *Source) readGPM(p *gpmPair, get func(nvml.GpmSample) nvml.Return, smp *model.Sample, g *gpu) {
	for _, sm := range []*nvml.GpmSample{&p.prev, &p.cur} {
		if *sm == nil {
			var ret nvml.Return
			if *sm, ret = s.lib.GpmSampleAlloc(); ret != nvml.SUCCESS {
				*sm = nil
				s.callFailed(g, "GpmSampleAlloc", ret)
				return
			}
		}
	}
	if ret := get(p.cur); ret != nvml.SUCCESS {
		s.callFailed(g, "GpmSampleGet", ret)
		p.have = false
		return
	}
	if p.have {
		m := &s.metrics
		m.NumMetrics = uint32(len(gpmMetrics))
		m.Sample1, m.Sample2 = p.prev, p.cur
		for i, gm := range gpmMetrics {
			m.Metrics[i] = nvml.GpmMetric{MetricId: uint32(gm.id)}
		}
		if ret := s.lib.GpmMetricsGet(m); ret == nvml.SUCCESS {
			for i, gm := range gpmMetrics {
				if nvml.Return(m.Metrics[i].NvmlReturn) == nvml.SUCCESS {
					*gm.store(smp) = model.Of(m.Metrics[i].Value / 100)
				}
			}
		} else {
			s.callFailed(g, "GpmMetricsGet", ret)
		}
		m.Sample1, m.Sample2 = nil, nil
	}
	p.prev, p.cur = p.cur, p.prev
	p.have = true
}
