package acceleratorattributesprocessor

import (
	"os"
	"reflect"

	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/kube"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/workload"
)

// rebuild makes a new index from the sources' last answers and the current
// topology, and swaps it in.
func (p *attributesProcessor) rebuild() { p.rebuildIf(false) }

// rebuildIf with onlyChanged keeps the index when the sources answered as
// they did last time: the periodic refresh asks every refresh_interval, and
// on a settled node nothing has changed (building the index for a 512-GPU
// node's pods is most of a refresh's cost).
func (p *attributesProcessor) rebuildIf(onlyChanged bool) {
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
	ix := p.idx.Load()
	if !onlyChanged || ix == nil || p.built == nil || !sameInput(p.built, &in) {
		ix = index.Build(in)
		p.idx.Store(ix)
		p.built = &in
	}
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

// sameInput reports whether b would build the index a built. An NVML MIG
// resolver is read while the index is built, so an input with one is never
// the same; the Kubernetes objects are compared by identity (the informers
// replace an object that changed), in any order.
func sameInput(a, b *index.Input) bool {
	if a.MIG != nil || b.MIG != nil || a.Topology != b.Topology || !sameKube(a.Kube, b.Kube) {
		return false
	}
	ak, bk := *a, *b
	ak.Kube, bk.Kube = nil, nil
	return reflect.DeepEqual(ak, bk)
}

func sameKube(a, b *kube.Snapshot) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.DRA == b.DRA && a.Node == b.Node &&
		sameSet(a.Pods, b.Pods) && sameSet(a.Claims, b.Claims) && sameSet(a.Slices, b.Slices)
}

// sameSet: the same pointers, in any order (each object once).
func sameSet[T any](a, b []*T) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[*T]struct{}, len(a))
	for _, o := range a {
		in[o] = struct{}{}
	}
	for _, o := range b {
		if _, ok := in[o]; !ok {
			return false
		}
	}
	return len(in) == len(b)
}
