package acceleratorattributesprocessor

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/mig"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

func strAttr(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return v.AsString()
}

func intAttr(m pcommon.Map, key string) int {
	v, ok := m.Get(key)
	if !ok {
		return -1
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		if n := v.Int(); n >= 0 && n < 1<<31 {
			return int(n)
		}
	case pcommon.ValueTypeStr:
		if n, err := strconv.Atoi(v.Str()); err == nil && n >= 0 {
			return n
		}
	}
	return -1
}

// holderKeys are the attributes that say who holds a device. They are
// cleared before a holder's are written, so that a copy never keeps another
// holder's (or a stale dcgm-exporter hint's) values.
var holderKeys = map[string]bool{
	accelschema.AttrK8sNamespaceName:   true,
	accelschema.AttrK8sPodName:         true,
	accelschema.AttrK8sPodUID:          true,
	accelschema.AttrK8sContainerName:   true,
	accelschema.AttrK8sDeploymentName:  true,
	accelschema.AttrK8sReplicaSetName:  true,
	accelschema.AttrK8sStatefulSetName: true,
	accelschema.AttrK8sDaemonSetName:   true,
	accelschema.AttrK8sJobName:         true,
	accelschema.AttrK8sCronJobName:     true,
	accelschema.AttrECSClusterARN:      true,
	accelschema.AttrECSTaskARN:         true,
	accelschema.AttrECSTaskFamily:      true,
	accelschema.AttrContainerName:      true,
	accelschema.AttrTeam:               true,
	accelschema.AttrWorkloadName:       true,
	accelschema.AttrWorkloadType:       true,
	accelschema.AttrJobID:              true,
	accelschema.AttrDRADriver:          true,
	accelschema.AttrDRAPool:            true,
	accelschema.AttrDRADevice:          true,
	accelschema.AttrDRAClaimName:       true,
	accelschema.AttrDRAClaimNamespace:  true,
	accelschema.AttrDRAShareID:         true,
}

func clearHolder(m pcommon.Map) {
	m.RemoveIf(func(k string, _ pcommon.Value) bool {
		return holderKeys[k] || strings.HasPrefix(k, accelschema.K8sPodLabelPrefix)
	})
}

func putAll(m pcommon.Map, kvs []index.KV) {
	for i := range kvs {
		put(m, &kvs[i])
	}
}

func put(m pcommon.Map, kv *index.KV) {
	if kv.IsDouble {
		m.PutDouble(kv.Key, kv.Double)
		return
	}
	m.PutStr(kv.Key, kv.Str)
}

// insertAll sets what the resource does not already say: receivers that
// read instance metadata know host.type and cloud.* better than node labels.
func insertAll(m pcommon.Map, kvs []index.KV) {
	for i := range kvs {
		if _, ok := m.Get(kvs[i].Key); !ok {
			put(m, &kvs[i])
		}
	}
}

// baseShare is the share of the physical device the resource stands for
// before it is split: the receiver's accelerator.partition.share, else the
// MIG profile's share, else 1.
func baseShare(m pcommon.Map) float64 {
	if v, ok := m.Get(accelschema.AttrPartitionShare); ok {
		switch v.Type() {
		case pcommon.ValueTypeDouble:
			if s := v.Double(); s > 0 && s <= 1 {
				return s
			}
		case pcommon.ValueTypeInt:
			if v.Int() == 1 {
				return 1
			}
		}
	}
	if profile := strAttr(m, accelschema.AttrPartitionProfile); profile != "" {
		if p, err := mig.ParseProfile(profile); err == nil {
			return p.Share(mig.MemoryGBFromModel(strAttr(m, accelschema.AttrHWModel)))
		}
	}
	return 1
}

// applyHolder writes one holding onto a resource: who, which partition,
// what share, and the node. It never sets hw.parent: enriched in place, the
// resource is still the device's own (splitShared adds hw.parent to the
// copies it makes).
func applyHolder(m pcommon.Map, c *index.Copy, base float64, node []index.KV) {
	clearHolder(m)
	putAll(m, c.Consumer.Attrs)
	m.PutStr(accelschema.AttrAllocationState, accelschema.AllocationAllocated)
	putAll(m, c.Extra)
	if c.PartitionType != "" {
		m.PutStr(accelschema.AttrPartitionType, c.PartitionType)
		if c.PartitionID != "" {
			m.PutStr(accelschema.AttrPartitionID, c.PartitionID)
		} else {
			m.Remove(accelschema.AttrPartitionID)
		}
	}
	m.PutDouble(accelschema.AttrPartitionShare, base*c.Share)
	insertAll(m, node)
}

// markReserved says that only a scheduler's placeholder holds the device
// (or the part of it the resource stands for): it is paid for and kept for
// workloads the placeholder does not name, so none of its attributes, team
// or workload is passed on.
func markReserved(m pcommon.Map, node []index.KV) {
	clearHolder(m)
	m.PutStr(accelschema.AttrAllocationState, accelschema.AllocationReserved)
	insertAll(m, node)
}
