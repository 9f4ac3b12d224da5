package acceleratorattributesprocessor

import (
	"errors"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/cgroup"
	"github.com/otelcol-accel/otelcol-accel/processor/acceleratorattributesprocessor/internal/index"
)

// consumerCopy is one consumer's copy of a shared device's resource.
type consumerCopy struct {
	consumer *index.Consumer
	rm       pmetric.ResourceMetrics
	// share is the part of the physical device the consumer holds.
	share float64
	// scopes are the copy's scopes, by the index of the device's scope the
	// points came from; made when the first point is moved.
	scopes map[int]pmetric.ScopeMetrics
}

// routeMeasured moves the points measured for one consumer from the
// device's resource to that consumer's copy:
//
//   - per-process points (process.pid): to the copy of the pod or ECS
//     container whose cgroup the process is in;
//   - per-pod points (accelerator.consumer.pod="<ns>/<pod>", dcgm-exporter's
//     per-pod split of a shared GPU): to the copy of that pod, without the
//     attribute, which the copy's identity now says.
//
// Points of processes and pods that hold no share (an MPS server, a
// monitoring agent that sees every GPU, a pod the sources do not know) stay
// on the device's resource: nothing is dropped, and a per-pod point that
// found no copy keeps its attribute. A metric left without points is
// removed from the device.
func (p *attributesProcessor) routeMeasured(dev pmetric.ResourceMetrics, copies []consumerCopy) {
	dst := make([]pmetric.NumberDataPointSlice, len(copies))
	made := make([]bool, len(copies))
	sms := dev.ScopeMetrics()
	for s := 0; s < sms.Len(); s++ {
		sm := sms.At(s)
		sm.Metrics().RemoveIf(func(m pmetric.Metric) bool {
			dps, ok := numberPoints(m)
			if !ok || !anyMeasuredPerConsumer(dps) {
				return false
			}
			clear(made)
			dps.RemoveIf(func(dp pmetric.NumberDataPoint) bool {
				i := p.measuredFor(dp, copies)
				if i < 0 {
					return false
				}
				if !made[i] {
					dst[i], made[i] = copies[i].metricLike(s, sm, m), true
				}
				dp.MoveTo(dst[i].AppendEmpty())
				return true
			})
			return dps.Len() == 0
		})
	}
}

// measuredFor is the copy a point was measured for, -1 if none. A per-pod
// point that finds its copy loses accelerator.consumer.pod.
func (p *attributesProcessor) measuredFor(dp pmetric.NumberDataPoint, copies []consumerCopy) int {
	attrs := dp.Attributes()
	if v, ok := attrs.Get(accelschema.AttrConsumerPod); ok {
		ns, name, ok := strings.Cut(v.AsString(), "/")
		if !ok {
			return -1
		}
		for i := range copies {
			if copies[i].consumer.IsPod(ns, name) {
				attrs.Remove(accelschema.AttrConsumerPod)
				return i
			}
		}
		return -1
	}
	if _, ok := attrs.Get(accelschema.AttrProcessPID); ok {
		return p.processOwner(dp, copies)
	}
	return -1
}

// processOwner finds the copy whose consumer runs the point's process: the
// container by id, else the pod by UID; -1 if none.
func (p *attributesProcessor) processOwner(dp pmetric.NumberDataPoint, copies []consumerCopy) int {
	pid := int64(intAttr(dp.Attributes(), accelschema.AttrProcessPID))
	if pid < 0 {
		return -1
	}
	o, err := p.pids.Lookup(pid)
	if err != nil {
		if errors.Is(err, cgroup.ErrNoProcess) {
			p.rl.Warn("pid-missing", "accelerator_attributes: cannot read a GPU process's cgroup; its per-process data stays on the device's own resource. "+
				"Run the collector with hostPID: true, or mount the host's /proc and set proc_root", zap.Error(err))
		} else {
			p.rl.Warn("pid-cgroup", "accelerator_attributes: malformed cgroup file", zap.Error(err))
		}
		return -1
	}
	byPod := -1
	for i := range copies {
		c := copies[i].consumer
		if o.ContainerID != "" {
			for _, cid := range c.ContainerIDs {
				if cid == o.ContainerID {
					return i
				}
			}
		}
		if byPod < 0 && o.PodUID != "" && c.PodUID == o.PodUID {
			byPod = i
		}
	}
	return byPod
}

// metricLike adds to the copy, in the scope matching the device's scope s,
// an empty metric shaped like m, and returns its points.
func (c *consumerCopy) metricLike(s int, sm pmetric.ScopeMetrics, m pmetric.Metric) pmetric.NumberDataPointSlice {
	scope, ok := c.scopes[s]
	if !ok {
		if c.scopes == nil {
			c.scopes = map[int]pmetric.ScopeMetrics{}
		}
		scope = c.rm.ScopeMetrics().AppendEmpty()
		scope.SetSchemaUrl(sm.SchemaUrl())
		sm.Scope().CopyTo(scope.Scope())
		c.scopes[s] = scope
	}
	nm := scope.Metrics().AppendEmpty()
	nm.SetName(m.Name())
	nm.SetDescription(m.Description())
	nm.SetUnit(m.Unit())
	m.Metadata().CopyTo(nm.Metadata())
	if m.Type() == pmetric.MetricTypeGauge {
		return nm.SetEmptyGauge().DataPoints()
	}
	sum := nm.SetEmptySum()
	sum.SetIsMonotonic(m.Sum().IsMonotonic())
	sum.SetAggregationTemporality(m.Sum().AggregationTemporality())
	return sum.DataPoints()
}

// numberPoints are the points of a gauge or sum: the only shapes that are
// measured per process or per pod.
func numberPoints(m pmetric.Metric) (pmetric.NumberDataPointSlice, bool) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints(), true
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints(), true
	}
	return pmetric.NumberDataPointSlice{}, false
}

// anyMeasuredPerConsumer: some point names a process or a pod. One metric
// may mix them with device-wide points (dcgm-exporter's per-pod
// utilization beside the GPU's own), so every point is looked at.
func anyMeasuredPerConsumer(dps pmetric.NumberDataPointSlice) bool {
	for k := 0; k < dps.Len(); k++ {
		if hasAny(dps.At(k).Attributes(), accelschema.AttrProcessPID, accelschema.AttrConsumerPod) {
			return true
		}
	}
	return false
}

func hasAny(m pcommon.Map, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m.Get(k); ok {
			return true
		}
	}
	return false
}
