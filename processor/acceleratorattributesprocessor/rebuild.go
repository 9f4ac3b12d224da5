package acceleratorattributesprocessor

import (
	"os"

	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/workload"
)

// rebuild makes a new index from the sources' last answers and the current
// topology, and swaps it in.
func (p *attributesProcessor) rebuild() {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := index.Input{
		NodeName:      p.cfg.NodeName,
		ClusterName:   p.cfg.ClusterName,
		HostNames:     hostNames(p.cfg.NodeName),
		Topology:      p.topo.current(),
		Workload:      p.workloadConfig(),
		InferencePods: p.infer.snapshot(),

		PlaceholderNamespaces: p.cfg.PlaceholderNamespaces,
	}
	p.contributeSources(&in)
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
