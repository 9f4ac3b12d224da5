package acceleratorcostprocessor

import (
	"math"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/pmetricutil"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorcostprocessor/internal/metadata"
)

// identity is what the resource attributes say about a device or partition.
type identity struct {
	key uint64 // hash of every resource attribute: one cumulative series per distinct resource

	hwID, parent, partType, partID, profile, model string
	// share is accelerator.partition.share when it is a share of a device:
	// in [0, 1]. A share of 0 is a resource that pays for nothing (the
	// attributes processor's copy for processes nobody holds).
	share    float64
	hasShare bool
	// coreIndex: the resource carries accelerator.neuroncore.index (a NeuronCore).
	coreIndex bool
	// allocated is false for accelerator.allocation.state=unallocated and
	// reserved; a missing state counts as allocated (see docs/cost-model.md).
	allocated      bool
	allocationSeen bool
	// reserved: only a scheduler's placeholder holds it (Run:ai's
	// reservation pods), for workloads no attribute names.
	reserved bool

	hostType, region string

	workload, workloadType, namespace, podUID, podName, nodeName string
	// hasHolder: the resource names who holds it (a pod, an ECS task, a job
	// or a workload), so a finding about it names someone who can act.
	hasHolder bool
}

// signals is what the resource's metrics say, at their latest timestamp.
type signals struct {
	t pcommon.Timestamp

	activity    float64
	activitySrc activitySource
	tensor, sm  float64
	hasTensor   bool
	hasSM       bool

	memUsed, memLimit       float64
	hasMemUsed, hasMemLimit bool

	procUtil, procMem       float64
	hasProcUtil, hasProcMem bool

	statusFailed, hasStatus bool
	xids                    []xid.ErrorCount // hw.errors{error.type=xid}

	kv                     float64
	hasKV                  bool
	waiting, running       float64
	hasWaiting, hasRunning bool

	// costed: the resource already carries this processor's scope (a second
	// accelerator_cost in the path, or a resource this processor made).
	costed bool
}

type activitySource uint8

const (
	noActivity activitySource = iota
	fromUtilization
	fromSMActive
	fromGREngine
	fromProcesses
)

func (a activitySource) String() string {
	switch a {
	case fromUtilization:
		return s.MetricGPUUtilization
	case fromSMActive:
		return s.MetricSMActive
	case fromGREngine:
		return s.MetricGREngineActive
	case fromProcesses:
		return s.MetricProcessUtilization
	default:
		return "none"
	}
}

// readIdentity reads the resource attributes in one pass, hashing them as it
// goes (order-independent, so the same set hashes the same however a
// producer ordered it).
func (p *costProcessor) readIdentity(attrs pcommon.Map) identity {
	var id identity
	var h uint64
	attrs.Range(func(k string, v pcommon.Value) bool {
		h += mix(xxhash.Sum64String(k) ^ valueHash(v))
		switch k {
		case s.AttrHWID:
			id.hwID = v.Str()
		case s.AttrHWParent:
			id.parent = v.Str()
		case s.AttrPartitionType:
			id.partType = v.Str()
		case s.AttrPartitionID:
			id.partID = v.AsString()
		case s.AttrPartitionProfile:
			id.profile = v.Str()
		case s.AttrPartitionShare:
			id.share, id.hasShare = shareValue(v)
		case s.AttrHWModel:
			id.model = v.Str()
		case s.AttrAllocationState:
			id.allocationSeen = true
			id.reserved = v.Str() == s.AllocationReserved
			id.allocated = v.Str() != s.AllocationUnallocated && !id.reserved
		case s.AttrWorkloadName:
			id.workload = v.Str()
			id.hasHolder = id.hasHolder || id.workload != ""
		case s.AttrWorkloadType:
			id.workloadType = v.Str()
		case s.AttrK8sNamespaceName:
			id.namespace = v.Str()
		case s.AttrK8sPodUID:
			id.podUID = v.Str()
		case s.AttrK8sPodName:
			id.podName = v.Str()
			id.hasHolder = id.hasHolder || id.podName != ""
		case s.AttrK8sNodeName:
			id.nodeName = v.Str()
		case s.AttrECSTaskARN, s.AttrJobID:
			id.hasHolder = id.hasHolder || v.AsString() != ""
		case s.AttrNeuronCoreIndex:
			id.coreIndex = true
		}
		return true
	})
	id.key = h ^ uint64(attrs.Len())
	if !id.allocationSeen {
		id.allocated = true
	}
	if id.hasShare && !(id.share >= 0 && id.share <= 1) { // NaN fails both
		id.hasShare = false
	}
	id.hostType = firstString(attrs, p.cfg.HostTypeAttributes)
	id.region = firstString(attrs, p.cfg.RegionAttributes)
	return id
}

func firstString(attrs pcommon.Map, keys []string) string {
	for _, k := range keys {
		if v, ok := attrs.Get(k); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
			return v.Str()
		}
	}
	return ""
}

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func valueHash(v pcommon.Value) uint64 {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return xxhash.Sum64String(v.Str())
	case pcommon.ValueTypeInt:
		return mix(uint64(v.Int()) + 1)
	case pcommon.ValueTypeDouble:
		return mix(math.Float64bits(v.Double()) + 2)
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return 3
		}
		return 4
	default:
		return xxhash.Sum64String(v.AsString())
	}
}

// readSignals scans every metric of the resource once: the latest value of
// each signal the cost model uses, and the latest timestamp of any point.
func readSignals(rm pmetric.ResourceMetrics) signals {
	var sg signals
	var actT [fromProcesses + 1]pcommon.Timestamp
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		sm := sms.At(i)
		if sm.Scope().Name() == metadata.ScopeName {
			sg.costed = true
			return sg
		}
		ms := sm.Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			var dps pmetric.NumberDataPointSlice
			switch m.Type() {
			case pmetric.MetricTypeGauge:
				dps = m.Gauge().DataPoints()
			case pmetric.MetricTypeSum:
				dps = m.Sum().DataPoints()
			default:
				sg.t = max(sg.t, pmetricutil.LatestTimestamp(m))
				continue
			}
			if dps.Len() == 0 {
				continue
			}
			switch m.Name() {
			case s.MetricGREngineActive:
				v, t := latest(dps)
				sg.setActivity(fromGREngine, v, t, &actT)
			case s.MetricSMActive:
				v, t := latest(dps)
				sg.sm, sg.hasSM = ratio(v), !math.IsNaN(v)
				sg.setActivity(fromSMActive, v, t, &actT)
			case s.MetricTensorActive:
				v, _ := latest(dps)
				sg.tensor, sg.hasTensor = ratio(v), !math.IsNaN(v)
			case s.MetricGPUUtilization:
				v, t := latestGeneralUtilization(dps)
				sg.setActivity(fromUtilization, v, t, &actT)
			case s.MetricGPUMemoryUsage:
				sg.memUsed, sg.hasMemUsed = sumAtLatest(dps, ownPoint)
			case s.MetricGPUMemoryLimit:
				v, _ := latest(dps)
				sg.memLimit, sg.hasMemLimit = v, v > 0
			case s.MetricProcessUtilization:
				sg.procUtil, sg.hasProcUtil = sumAtLatest(dps, anyPoint)
			case s.MetricProcessMemoryUsage:
				sg.procMem, sg.hasProcMem = sumAtLatest(dps, anyPoint)
			case s.MetricStatus:
				sg.readStatus(dps)
			case s.MetricErrors:
				sg.readXIDs(dps)
			case s.MetricKVCacheUtilization:
				v, _ := latest(dps)
				sg.kv, sg.hasKV = ratio(v), !math.IsNaN(v)
			case s.MetricRequestsWaiting:
				v, _ := latest(dps)
				sg.waiting, sg.hasWaiting = v, !math.IsNaN(v)
			case s.MetricRequestsRunning:
				v, _ := latest(dps)
				sg.running, sg.hasRunning = v, !math.IsNaN(v)
			}
			for k := 0; k < dps.Len(); k++ {
				sg.t = max(sg.t, dps.At(k).Timestamp())
			}
		}
	}
	return sg
}

// setActivity keeps the best activity signal: GR-engine active, then SM
// active, then utilization.
func (sg *signals) setActivity(src activitySource, v float64, t pcommon.Timestamp, seen *[fromProcesses + 1]pcommon.Timestamp) {
	if math.IsNaN(v) || src < sg.activitySrc {
		return
	}
	if src == sg.activitySrc && t < seen[src] {
		return
	}
	seen[src] = t
	sg.activity, sg.activitySrc = ratio(v), src
}

func (sg *signals) readStatus(dps pmetric.NumberDataPointSlice) {
	_, latestT := latest(dps)
	for k := 0; k < dps.Len(); k++ {
		dp := dps.At(k)
		if dp.Timestamp() != latestT {
			continue
		}
		state, ok := dp.Attributes().Get(s.AttrHWState)
		if !ok {
			continue
		}
		sg.hasStatus = true
		if state.Str() == s.HWStateFailed && number(dp) > 0 {
			sg.statusFailed = true
		}
	}
}

// ratio clamps a 0..1 signal; sources that report percent by mistake are
// clamped rather than trusted.
func ratio(v float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return math.Min(v, 1)
}

func number(dp pmetric.NumberDataPoint) float64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(dp.IntValue())
	}
	return dp.DoubleValue()
}

// latest returns the value of the newest point (NaN when it has none).
func latest(dps pmetric.NumberDataPointSlice) (float64, pcommon.Timestamp) {
	best := 0
	for k := 1; k < dps.Len(); k++ {
		if dps.At(k).Timestamp() > dps.At(best).Timestamp() {
			best = k
		}
	}
	dp := dps.At(best)
	if dp.ValueType() == pmetric.NumberDataPointValueTypeEmpty {
		return math.NaN(), dp.Timestamp()
	}
	return number(dp), dp.Timestamp()
}

// latestGeneralUtilization ignores the encoder and decoder engines, and
// the pods' points (ownPoint).
func latestGeneralUtilization(dps pmetric.NumberDataPointSlice) (float64, pcommon.Timestamp) {
	v, t := math.NaN(), pcommon.Timestamp(0)
	for k := 0; k < dps.Len(); k++ {
		dp := dps.At(k)
		if task, ok := dp.Attributes().Get(s.AttrHWGPUTask); ok && task.Str() != s.GPUTaskGeneral || !ownPoint(dp) {
			continue
		}
		if math.IsNaN(v) || dp.Timestamp() > t {
			v, t = number(dp), dp.Timestamp()
		}
	}
	return v, t
}

// sumAtLatest adds the points of use that share the newest timestamp
// (Neuron memory by category, one point per process).
func sumAtLatest(dps pmetric.NumberDataPointSlice, use func(pmetric.NumberDataPoint) bool) (float64, bool) {
	_, t := latest(dps)
	sum, n := 0.0, 0
	for k := 0; k < dps.Len(); k++ {
		if dp := dps.At(k); dp.Timestamp() == t && dp.ValueType() != pmetric.NumberDataPointValueTypeEmpty && use(dp) {
			if v := number(dp); !math.IsNaN(v) && v >= 0 {
				sum += v
				n++
			}
		}
	}
	return sum, n > 0
}

// ownPoint: the point measures the resource itself. A point that still
// carries accelerator.consumer.pod is a pod's share of a device that the
// attributes processor could not give to that pod's copy: it is neither the
// device's utilization nor its memory in use.
func ownPoint(dp pmetric.NumberDataPoint) bool {
	_, pod := dp.Attributes().Get(s.AttrConsumerPod)
	return !pod
}

func anyPoint(pmetric.NumberDataPoint) bool { return true }

// podKeys are the keys a serving pod's signals are filed under and looked up
// by: its UID, and namespace/name.
func (id identity) podKeys() (uid, name string) {
	uid = id.podUID
	if id.podName != "" {
		name = id.namespace + "/" + id.podName
	}
	return uid, name
}

// replicaKey names the pod (or task, or device) a resource belongs to, so
// that a workload's replicas are counted as pods, not as devices.
func (id identity) replicaKey() string {
	uid, name := id.podKeys()
	switch {
	case uid != "":
		return uid
	case name != "":
		return name
	default:
		return id.hwID
	}
}

// workloadKey names a workload for baselines and replica counts.
func (id identity) workloadKey() string {
	if id.workload == "" {
		return ""
	}
	if id.namespace == "" {
		return id.workload
	}
	return id.namespace + "/" + id.workload
}

// partitionOf is the hw.id of the physical device this resource is a
// partition of (a MIG instance's GPU, a NeuronCore's device, the GPU of a
// time-sliced or MPS copy), or "" for a resource that is not a partition.
func (id *identity) partitionOf() string {
	if id.parent == "" || id.parent == id.hwID && isPartitionNone(id.partType) {
		return ""
	}
	return id.parent
}

// deviceLevel: the resource stands for a whole physical device (or a
// holder's copy of one), not for a partition of it — whatever partition
// type an upstream processor gave it. NeuronCores are recognised by their
// core index even when they lack hw.parent.
func (id *identity) deviceLevel() bool {
	return id.partitionOf() == "" && !id.coreIndex
}

func isPartitionNone(partType string) bool {
	return partType == "" || partType == s.PartitionNone
}

func isMIG(partType string) bool { return partType == s.PartitionMIG }
