package acceleratorattributesprocessor

import (
	"errors"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/cgroup"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// A health event that names a process (the kernel log's "pid=…, name=…",
// NVML's event pid) says which workload the failure hit, which the device's
// resource cannot: a shared GPU's event describes the device and no holder,
// and a device held by one pod may have been running another's process (an
// MPS server's client, a monitoring agent). The pid is resolved on this node
// as per-process metrics are (pid → /proc/<pid>/cgroup → container or pod),
// and the pod's identity, under the names the metrics copies carry, goes on
// that record only. The device's identity stays on the resource.

// processPods writes, on each record of rl that names a pid resolving to a
// pod or container on this node, that workload's attributes. e is the
// device's entry (nil when unknown): its holders are matched first, as
// they carry the container; otherwise any pod on the node by UID.
func (p *attributesProcessor) processPods(ix *index.Index, e *index.Entry, rl plog.ResourceLogs) {
	sls := rl.ScopeLogs()
	for s := 0; s < sls.Len(); s++ {
		lrs := sls.At(s).LogRecords()
		for r := 0; r < lrs.Len(); r++ {
			lr := lrs.At(r)
			attrs := lr.Attributes()
			pid := intAttr(attrs, accelschema.AttrProcessPID)
			if pid <= 0 || !isHealthEvent(lr) {
				continue
			}
			if kvs, ok := p.ownerAttrs(ix, e, int64(pid)); ok {
				clearHolder(attrs)
				putAll(attrs, kvs)
			}
		}
	}
}

// ownerAttrs are the attributes of the consumer or pod that runs pid.
func (p *attributesProcessor) ownerAttrs(ix *index.Index, e *index.Entry, pid int64) ([]index.KV, bool) {
	o, err := p.pids.Lookup(pid)
	if err != nil {
		// The process named by a failure has often ended by the time its
		// event is read (the driver kills it on most XIDs): routine, so
		// debug, and the event keeps its pid and name.
		if errors.Is(err, cgroup.ErrNoProcess) {
			p.rl.Debug("event-pid-missing", "accelerator_attributes: the process a health event names has no cgroup file here (ended, or no host /proc); the event keeps its pid without a pod", zap.Error(err))
		} else {
			p.rl.Warn("event-pid-cgroup", "accelerator_attributes: malformed cgroup file of a health event's process", zap.Error(err))
		}
		return nil, false
	}
	if e != nil {
		byPod := -1
		for i := range e.Copies {
			c := e.Copies[i].Consumer
			if c == nil {
				continue
			}
			if o.ContainerID != "" {
				for _, cid := range c.ContainerIDs {
					if cid == o.ContainerID {
						return c.Attrs, true
					}
				}
			}
			if byPod < 0 && o.PodUID != "" && c.PodUID == o.PodUID {
				byPod = i
			}
		}
		if byPod >= 0 {
			return e.Copies[byPod].Consumer.Attrs, true
		}
	}
	if o.PodUID == "" {
		return nil, false
	}
	if pod, ok := ix.PodByUID(o.PodUID); ok {
		return pod.Attrs, true
	}
	return nil, false
}

// namesPod: the resource is a pod's (an inference server's), whose records'
// pids, if any, may be in the pod's own pid namespace, not the host's.
func namesPod(attrs pcommon.Map) bool {
	return hasAny(attrs, accelschema.AttrK8sPodUID, accelschema.AttrK8sPodName)
}

// healthEventPrefix starts every accelschema health event name
// (accelschema.EventXID, EventPCIeAER, …).
const healthEventPrefix = "accelerator.health."

// isHealthEvent: the record is one of our receivers' health events, whose
// pids are the host's (the kernel's, NVML's). Other logs in the pipeline
// (OTLP from an application) may carry a pid of their container's own
// namespace, which the host's /proc would map to another process.
func isHealthEvent(lr plog.LogRecord) bool {
	name := lr.EventName()
	if name == "" {
		name = strAttr(lr.Attributes(), accelschema.AttrEventName)
	}
	return strings.HasPrefix(name, healthEventPrefix)
}
