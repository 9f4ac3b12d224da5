package acceleratorattributesprocessor

import (
	"maps"
	"reflect"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// topologyState holds what resources teach about the node's devices (see
// index.Topology). Readers load an immutable snapshot; a batch that teaches
// something new swaps in a new one and rebuilds the index at once, so that
// the same batch is already attributed with it. Whatever is not seen for two
// periods is forgotten (MIG reconfigured, device gone).
type topologyState struct {
	eff    atomic.Pointer[index.Topology]
	mu     sync.Mutex
	period *index.Topology
	prev   *index.Topology
}

func (t *topologyState) init() {
	t.eff.Store(index.NewTopology())
	t.period, t.prev = index.NewTopology(), index.NewTopology()
}

func (t *topologyState) current() *index.Topology { return t.eff.Load() }

// observe records one batch's observations; true when the effective
// topology changed.
func (t *topologyState) observe(obs []index.Observation) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	eff := t.eff.Load()
	var next *index.Topology
	for _, o := range obs {
		if !t.period.Knows(o) {
			t.period.Learn(o)
		}
		if !eff.Knows(o) {
			if next == nil {
				next = eff.Clone()
			}
			next.Learn(o)
		}
	}
	if next == nil {
		return false
	}
	t.eff.Store(next)
	return true
}

// rotate starts a new period; true when something was forgotten.
func (t *topologyState) rotate() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	merged := t.prev.Clone()
	mergeInto(merged, t.period)
	t.prev, t.period = t.period, index.NewTopology()
	if reflect.DeepEqual(merged, t.eff.Load()) {
		return false
	}
	t.eff.Store(merged)
	return true
}

func mergeInto(dst, src *index.Topology) {
	maps.Copy(dst.MIGPos, src.MIGPos)
	maps.Copy(dst.MPSThreads, src.MPSThreads)
	for k, v := range src.MIGParents {
		if dst.MIGParents[k] == nil {
			dst.MIGParents[k] = map[string]bool{}
		}
		maps.Copy(dst.MIGParents[k], v)
	}
	for k, v := range src.NeuronCores {
		if dst.NeuronCores[k] == nil {
			dst.NeuronCores[k] = map[int]bool{}
		}
		maps.Copy(dst.NeuronCores[k], v)
	}
}

// inferenceState remembers pods seen serving gen_ai metrics (by UID and by
// ns/name); it holds live pods only (retain).
type inferenceState struct {
	mu   sync.Mutex
	pods map[string]bool
}

func (s *inferenceState) init() { s.pods = map[string]bool{} }

func (s *inferenceState) observe(keys ...string) (isNew bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if k != "" && !s.pods[k] {
			s.pods[k], isNew = true, true
		}
	}
	return isNew
}

func (s *inferenceState) snapshot() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.pods)
}

// retain forgets pods the index no longer knows.
func (s *inferenceState) retain(ix *index.Index) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.pods {
		if _, ok := ix.PodByUID(k); ok {
			continue
		}
		if ns, name, ok := splitNSName(k); ok {
			if _, ok := ix.PodByName(ns, name); ok {
				continue
			}
		}
		delete(s.pods, k)
	}
}

func splitNSName(k string) (string, string, bool) {
	for i := 0; i < len(k); i++ {
		if k[i] == '/' {
			return k[:i], k[i+1:], true
		}
	}
	return "", "", false
}

// learn reads what the batch teaches before it is enriched.
func (p *attributesProcessor) learn(rms pmetric.ResourceMetricsSlice) {
	var obs []index.Observation
	newInference := false
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		attrs := rm.Resource().Attributes()
		id, ok := identityOf(attrs)
		if !ok {
			if _, serving := attrs.Get(accelschema.AttrGenAIProviderName); serving {
				uid := strAttr(attrs, accelschema.AttrK8sPodUID)
				ns, name := strAttr(attrs, accelschema.AttrK8sNamespaceName), strAttr(attrs, accelschema.AttrK8sPodName)
				nsName := ""
				if ns != "" && name != "" {
					nsName = ns + "/" + name
				}
				if p.infer.observe(uid, nsName) {
					newInference = true
				}
			}
			continue
		}
		o := index.Observation{Identity: id}
		teaches := id.Kind == accelschema.KindAWSNeuron && id.CoreIndex >= 0 || id.Parent != "" && id.GI >= 0
		if id.Kind == accelschema.KindNvidiaGPU && id.Parent == "" {
			if t := mpsThreads(rm); t > 0 {
				o.MPSThreads, teaches = t, true
			}
		}
		if teaches {
			obs = append(obs, o)
		}
	}
	// Rebuilding here (O(devices + pods), rare: only when something new is
	// learned) lets this very batch be attributed with what it taught.
	topoChanged := len(obs) > 0 && p.topo.observe(obs)
	if topoChanged || newInference && p.cfg.WorkloadType.Infer {
		p.rebuild()
	}
}

// mpsThreads reads the MPS daemon's default active-thread fraction if the
// resource carries it.
func mpsThreads(rm pmetric.ResourceMetrics) float64 {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			if m.Name() != accelschema.MetricMPSActiveThreads || m.Type() != pmetric.MetricTypeGauge {
				continue
			}
			dps := m.Gauge().DataPoints()
			if dps.Len() == 0 {
				return 0
			}
			dp := dps.At(dps.Len() - 1)
			v := dp.DoubleValue()
			if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
				v = float64(dp.IntValue())
			}
			if v > 1 { // a percentage, not a fraction
				v /= 100
			}
			if v > 0 && v <= 1 {
				return v
			}
			return 0
		}
	}
	return 0
}

// identityOf reads a device resource's identity; false for resources that
// are not accelerator devices (inference servers, anything else).
func identityOf(attrs pcommon.Map) (index.Identity, bool) {
	hwID := strAttr(attrs, accelschema.AttrHWID)
	if hwID == "" {
		return index.Identity{}, false
	}
	kind := strAttr(attrs, accelschema.AttrKind)
	if kind == "" {
		if strAttr(attrs, accelschema.AttrHWType) != accelschema.HWTypeGPU {
			return index.Identity{}, false
		}
		kind = accelschema.KindNvidiaGPU
	}
	id := index.Identity{
		HWID:        hwID,
		Parent:      strAttr(attrs, accelschema.AttrHWParent),
		Kind:        kind,
		GI:          intAttr(attrs, accelschema.AttrMIGGPUInstanceID),
		DeviceIndex: intAttr(attrs, accelschema.AttrDeviceIndex),
		CoreIndex:   intAttr(attrs, accelschema.AttrNeuronCoreIndex),
	}
	if kind == accelschema.KindAWSNeuron && id.DeviceIndex < 0 {
		id.DeviceIndex = neuronDeviceIndex(hwID)
		if id.DeviceIndex < 0 {
			id.DeviceIndex = neuronDeviceIndex(id.Parent)
		}
	}
	return id, true
}

// neuronDeviceIndex reads i from neuron_device_<i>[/…].
func neuronDeviceIndex(s string) int {
	const prefix = "neuron_device_"
	if len(s) <= len(prefix) || s[:len(prefix)] != prefix {
		return -1
	}
	n := 0
	digits := 0
	for _, c := range s[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
		digits++
		if digits > 6 {
			return -1
		}
	}
	if digits == 0 {
		return -1
	}
	return n
}
