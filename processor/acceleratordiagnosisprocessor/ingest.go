package acceleratordiagnosisprocessor

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// processMetrics reads latencies and the servers' state from inference
// resources, readings from device resources and the replicas per zone from
// accelerator_k8s, judges the windows that closed, and appends the
// regressions counter of the endpoints judged. Data passes through
// unchanged otherwise.
func (p *diagnosisProcessor) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	now := p.now()
	p.mu.Lock()
	rms := md.ResourceMetrics()
	n := rms.Len()
	for i := 0; i < n; i++ {
		rm := rms.At(i)
		res := rm.Resource().Attributes()
		if id := str(res, s.AttrHWID); id != "" {
			p.ingestDevice(id, res, rm, now)
			continue
		}
		switch kind := resourceKind(rm); kind {
		case kindInference:
			p.ingestEndpoint(res, rm, now)
		case kindZones:
			p.ingestZones(res, rm, now)
		}
	}
	judged := p.judged
	p.judged = nil
	findings := p.judgeAll(judged, now)
	p.appendRegressions(md, judged)
	p.expire(now)
	p.mu.Unlock()
	p.deliver(ctx, findings, now)
	return md, nil
}

const (
	kindOther = iota
	kindInference
	kindZones
)

// resourceKind tells an inference server's resource (gen_ai.server.*
// series) and accelerator_k8s's replicas per zone from the rest.
func resourceKind(rm pmetric.ResourceMetrics) int {
	sms := rm.ScopeMetrics()
	for j := 0; j < sms.Len(); j++ {
		ms := sms.At(j).Metrics()
		for k := 0; k < ms.Len(); k++ {
			name := ms.At(k).Name()
			switch {
			case strings.HasPrefix(name, "gen_ai.server."):
				return kindInference
			case name == s.MetricWorkloadReplicas:
				return kindZones
			}
		}
	}
	return kindOther
}

// endpointKey keys an inference resource by workload (namespace/name),
// else by server address and port, with its model.
func endpointKey(res pcommon.Map) (key, workload, model string) {
	model = str(res, s.AttrGenAIRequestModel)
	if ns, wl := str(res, s.AttrK8sNamespaceName), str(res, s.AttrWorkloadName); ns != "" && wl != "" {
		workload = ns + "/" + wl
		return workload, workload, model
	}
	if addr := str(res, s.AttrServerAddress); addr != "" {
		if port, ok := res.Get(s.AttrServerPort); ok {
			return addr + ":" + port.AsString(), "", model
		}
		return addr, "", model
	}
	return "", "", model
}

// endpointResource is what of an inference resource names the endpoint.
var endpointResource = []string{s.AttrK8sClusterName, s.AttrK8sNamespaceName, s.AttrWorkloadName, s.AttrK8sDeploymentName,
	s.AttrK8sStatefulSetName, s.AttrTeam, s.AttrGenAIProviderName, s.AttrGenAIRequestModel}

func (p *diagnosisProcessor) endpointOf(res pcommon.Map, now time.Time) *endpoint {
	key, workload, model := endpointKey(res)
	if key == "" {
		p.warn.Warn("no-endpoint", "an inference resource names neither k8s.namespace.name and accelerator.workload.name nor server.address; its latencies are not diagnosed (run accelerator_attributes before this processor)")
		return nil
	}
	mk := key + "\x00" + model
	e := p.endpoints[mk]
	if e == nil {
		e = &endpoint{key: key, workload: workload, model: model, res: pcommon.NewMap(), idx: -1,
			pods: map[string]podSeen{}, lastFinding: map[string]pcommon.Timestamp{}, regressions: map[string]int64{}}
		for _, a := range endpointResource {
			if v, ok := res.Get(a); ok {
				v.CopyTo(e.res.PutEmpty(a))
			}
		}
		e.res.PutStr(s.AttrInferenceEndpoint, key)
		p.endpoints[mk] = e
	}
	e.seen = now
	return e
}

// advance moves the endpoint to window idx, queueing the window it leaves
// to be judged after this batch.
func (p *diagnosisProcessor) advance(e *endpoint, idx int64) {
	if idx <= e.idx {
		return
	}
	if e.started == 0 {
		e.started = pcommon.Timestamp(idx * int64(p.cfg.Window))
	}
	if e.idx >= 0 {
		p.judged = append(p.judged, judgement{ep: e, idx: e.idx, w: e.cur})
	}
	e.idx = idx
	e.cur = window{}
}

func (p *diagnosisProcessor) windowOf(t pcommon.Timestamp) int64 {
	return int64(t) / int64(p.cfg.Window)
}

func (p *diagnosisProcessor) ingestEndpoint(res pcommon.Map, rm pmetric.ResourceMetrics, now time.Time) {
	e := p.endpointOf(res, now)
	if e == nil {
		return
	}
	pod := str(res, s.AttrK8sPodUID)
	series := pod
	if series == "" {
		series = e.key + "\x00" + e.model
	}
	if pod != "" {
		ps := p.podOf(pod, now)
		ps.endpoint = e.key + "\x00" + e.model
	}
	sms := rm.ScopeMetrics()
	for j := 0; j < sms.Len(); j++ {
		ms := sms.At(j).Metrics()
		for k := 0; k < ms.Len(); k++ {
			m := ms.At(k)
			switch m.Name() {
			case s.MetricTimeToFirstToken, s.MetricInterTokenLatency:
				if m.Type() != pmetric.MetricTypeHistogram {
					continue
				}
				p.ingestLatency(e, series, m, now)
			case s.MetricKVCacheUtilization:
				forGauge(m, func(t pcommon.Timestamp, v float64, _ pcommon.Map) {
					p.advance(e, p.windowOf(t))
					e.cur.hasKV = true
					e.cur.kvMax = max(e.cur.kvMax, v)
				})
			case s.MetricRequestsWaiting, s.MetricRequestsRunning:
				waiting := m.Name() == s.MetricRequestsWaiting
				forGauge(m, func(t pcommon.Timestamp, v float64, _ pcommon.Map) {
					p.advance(e, p.windowOf(t))
					if waiting {
						e.cur.waitSum += v
						e.cur.waitN++
					} else {
						e.cur.runSum += v
						e.cur.runN++
					}
				})
			case s.MetricPreemptions:
				p.forCounterDelta(series, m, now, func(t pcommon.Timestamp, d, _ float64, _ pcommon.Map) {
					p.advance(e, p.windowOf(t))
					e.cur.hasPreemptions = true
					e.cur.preemptions += d
				})
			}
		}
	}
	if pod != "" && e.idx >= 0 {
		e.pods[pod] = podSeen{idx: e.idx, node: str(res, s.AttrK8sNodeName)}
	}
}

func (p *diagnosisProcessor) ingestLatency(e *endpoint, series string, m pmetric.Metric, now time.Time) {
	h := m.Histogram()
	delta := h.AggregationTemporality() == pmetric.AggregationTemporalityDelta
	dps := h.DataPoints()
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		counts := dp.BucketCounts()
		if counts.Len() == 0 {
			continue
		}
		add := p.scratch[:0]
		if delta {
			for b := 0; b < counts.Len(); b++ {
				add = append(add, float64(counts.At(b)))
			}
		} else {
			key := seriesKey(series, m.Name(), dp.Attributes())
			c := p.series[key]
			fresh := c == nil || len(c.counts) != counts.Len() || (dp.StartTimestamp() != 0 && dp.StartTimestamp() != c.start)
			if c == nil {
				c = &cumulative{}
				p.series[key] = c
			}
			if !fresh {
				for b := 0; b < counts.Len(); b++ {
					d := float64(counts.At(b)) - c.counts[b]
					if d < 0 { // a reset without a new start time
						fresh = true
						break
					}
					add = append(add, d)
				}
			}
			c.t, c.start, c.seen = dp.Timestamp(), dp.StartTimestamp(), now
			c.counts = c.counts[:0]
			for b := 0; b < counts.Len(); b++ {
				c.counts = append(c.counts, float64(counts.At(b)))
			}
			if fresh {
				// First sight (or a restart): nothing to compare with yet.
				continue
			}
		}
		p.scratch = add
		p.advance(e, p.windowOf(dp.Timestamp()))
		hist := &e.cur.ttft
		if m.Name() == s.MetricInterTokenLatency {
			hist = &e.cur.itl
		}
		if !hist.add(dp.ExplicitBounds(), add) {
			p.warn.Warn("bounds\x00"+e.key, "an endpoint's servers report "+m.Name()+" with different bucket bounds; the series that differ are left out of its percentiles",
				zap.String("endpoint", e.key), zap.String("model", e.model))
		}
	}
}

// ingestDevice reads a device resource: who holds it, what it is part of,
// its activity, throttling and, on a consumer's copy of a shared GPU, the
// consumer's own processes' activity.
func (p *diagnosisProcessor) ingestDevice(hwID string, res pcommon.Map, rm pmetric.ResourceMetrics, now time.Time) {
	parent, ptype := str(res, s.AttrHWParent), str(res, s.AttrPartitionType)
	// A consumer's copy of a shared GPU keeps the GPU's hw.id (and names
	// it as its parent): it is told from the device's own resource, and
	// from the other consumers' copies, by its partition and holder.
	id := hwID
	if s.IsConsumerCopy(hwID, parent, ptype) {
		id = hwID + "\x00" + str(res, s.AttrPartitionID) + "\x00" + str(res, s.AttrK8sPodUID)
	}
	d := p.devices[id]
	if d == nil {
		d = &device{win: emptyWindows}
		p.devices[id] = d
	}
	d.seen = now
	if parent != "" && parent != id {
		d.parent = parent
		kids := p.children[parent]
		if kids == nil {
			kids = map[string]struct{}{}
			p.children[parent] = kids
		}
		kids[id] = struct{}{}
	}
	// Shared: a time-sliced or MPS replica, or a DRA claim's copy for one
	// of its several consumers (the copy names its own device as parent).
	d.shared = s.IsSharedCopy(ptype) || ptype == s.PartitionDRA && parent == hwID
	if pod := str(res, s.AttrK8sPodUID); pod != "" {
		d.pod = pod
		ps := p.podOf(pod, now)
		ps.devices[id] = struct{}{}
	}
	sms := rm.ScopeMetrics()
	for j := 0; j < sms.Len(); j++ {
		ms := sms.At(j).Metrics()
		for k := 0; k < ms.Len(); k++ {
			m := ms.At(k)
			switch m.Name() {
			case s.MetricSMActive:
				forGauge(m, func(t pcommon.Timestamp, v float64, _ pcommon.Map) {
					w := d.at(p.windowOf(t))
					w.sm += v
					w.smN++
				})
			case s.MetricTensorActive:
				forGauge(m, func(t pcommon.Timestamp, v float64, _ pcommon.Map) {
					w := d.at(p.windowOf(t))
					w.tensor += v
					w.tensorN++
				})
			case s.MetricProcessUtilization, s.MetricGPUUtilization:
				// A consumer's own activity: its processes' (NVML), or the
				// per-pod utilization dcgm-exporter measures on a shared GPU
				// (the dcgm receiver's per_pod_usage) that accelerator_attributes
				// moved to the consumer's copy. One sample per scrape: the
				// consumer's processes together. The device's own utilization
				// (not a copy) is no consumer's.
				if m.Name() == s.MetricGPUUtilization && (d.parent == "" || !d.shared) {
					continue
				}
				var sum float64
				var t pcommon.Timestamp
				forGauge(m, func(ts pcommon.Timestamp, v float64, a pcommon.Map) {
					if task := str(a, s.AttrHWGPUTask); task != "" && task != s.GPUTaskGeneral {
						return
					}
					sum, t = sum+v, ts
				})
				if t != 0 {
					w := d.at(p.windowOf(t))
					w.proc += sum
					w.procN++
				}
			case s.MetricThrottleActive:
				var power, thermal float64
				var t pcommon.Timestamp
				forGauge(m, func(ts pcommon.Timestamp, v float64, a pcommon.Map) {
					t = ts
					switch throttleClass(str(a, s.AttrThrottleReason)) {
					case classPower:
						power = max(power, v)
					case classThermal:
						thermal = max(thermal, v)
					}
				})
				if t != 0 {
					p.throttleSample(d, t, min(power, 1), min(thermal, 1))
				}
			case s.MetricThrottleTime:
				var power, thermal float64
				var t pcommon.Timestamp
				p.forCounterDelta(id, m, now, func(ts pcommon.Timestamp, delta, seconds float64, a pcommon.Map) {
					if seconds <= 0 {
						return
					}
					t = ts
					switch throttleClass(str(a, s.AttrThrottleReason)) {
					case classPower:
						power = max(power, delta/seconds)
					case classThermal:
						thermal = max(thermal, delta/seconds)
					}
				})
				if t != 0 {
					p.throttleSample(d, t, min(power, 1), min(thermal, 1))
				}
			}
		}
	}
}

func (p *diagnosisProcessor) throttleSample(d *device, t pcommon.Timestamp, power, thermal float64) {
	w := d.at(p.windowOf(t))
	w.throttleSeen = true
	w.power += power
	w.powerN++
	w.thermal += thermal
	w.thermalN++
}

const (
	classOther = iota
	classPower
	classThermal
)

// throttleClass sorts the throttle reasons into the two the throttling
// rule reads: power (the cap, software or board) and heat.
func throttleClass(reason string) int {
	switch reason {
	case s.ThrottlePower, s.ThrottleSWPowerCap, s.ThrottleBoardLimit:
		return classPower
	case s.ThrottleThermal, s.ThrottleHWSlowdown:
		return classThermal
	}
	return classOther
}

// ingestZones reads accelerator_k8s's ready replicas of a workload in one
// zone.
func (p *diagnosisProcessor) ingestZones(res pcommon.Map, rm pmetric.ResourceMetrics, now time.Time) {
	ns, wl, zone := str(res, s.AttrK8sNamespaceName), str(res, s.AttrWorkloadName), str(res, s.AttrCloudZone)
	if ns == "" || wl == "" || zone == "" {
		return
	}
	ws := p.workloadOf(ns+"/"+wl, now)
	sms := rm.ScopeMetrics()
	for j := 0; j < sms.Len(); j++ {
		ms := sms.At(j).Metrics()
		for k := 0; k < ms.Len(); k++ {
			if m := ms.At(k); m.Name() == s.MetricWorkloadReplicas {
				forGauge(m, func(_ pcommon.Timestamp, v float64, _ pcommon.Map) {
					if ws.zonesNow == nil {
						ws.zonesNow = map[string]int64{}
					}
					ws.zonesNow[zone] = int64(v)
				})
			}
		}
	}
}

func (p *diagnosisProcessor) podOf(uid string, now time.Time) *podState {
	ps := p.pods[uid]
	if ps == nil {
		ps = &podState{devices: map[string]struct{}{}}
		p.pods[uid] = ps
	}
	ps.seen = now
	return ps
}

func (p *diagnosisProcessor) workloadOf(key string, now time.Time) *workloadState {
	ws := p.workloads[key]
	if ws == nil {
		ws = &workloadState{}
		p.workloads[key] = ws
	}
	ws.seen = now
	return ws
}

// forGauge calls f with every point of a gauge.
func forGauge(m pmetric.Metric, f func(t pcommon.Timestamp, v float64, attrs pcommon.Map)) {
	if m.Type() != pmetric.MetricTypeGauge {
		return
	}
	dps := m.Gauge().DataPoints()
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		f(dp.Timestamp(), numberValue(dp), dp.Attributes())
	}
}

// forCounterDelta calls f with the increase of every point of a monotonic
// sum since its last point, and the seconds between the two. The first
// point of a series, and a reset, only record the value.
func (p *diagnosisProcessor) forCounterDelta(series string, m pmetric.Metric, now time.Time, f func(t pcommon.Timestamp, delta, seconds float64, attrs pcommon.Map)) {
	if m.Type() != pmetric.MetricTypeSum {
		return
	}
	sum := m.Sum()
	dps := sum.DataPoints()
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		v := numberValue(dp)
		if sum.AggregationTemporality() == pmetric.AggregationTemporalityDelta {
			f(dp.Timestamp(), v, time.Duration(dp.Timestamp()-dp.StartTimestamp()).Seconds(), dp.Attributes())
			continue
		}
		key := seriesKey(series, m.Name(), dp.Attributes())
		c := p.series[key]
		if c == nil {
			c = &cumulative{}
			p.series[key] = c
		} else if v >= c.value && dp.Timestamp() > c.t && (dp.StartTimestamp() == 0 || dp.StartTimestamp() == c.start) {
			f(dp.Timestamp(), v-c.value, time.Duration(dp.Timestamp()-c.t).Seconds(), dp.Attributes())
		}
		c.t, c.start, c.value, c.seen = dp.Timestamp(), dp.StartTimestamp(), v, now
	}
}

func numberValue(dp pmetric.NumberDataPoint) float64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(dp.IntValue())
	}
	return dp.DoubleValue()
}

// seriesKey names one series: its resource's key, the metric and the
// point's attributes in order.
func seriesKey(resource, metric string, attrs pcommon.Map) string {
	var b strings.Builder
	b.WriteString(resource)
	b.WriteByte(0)
	b.WriteString(metric)
	if attrs.Len() == 0 {
		return b.String()
	}
	keys := make([]string, 0, attrs.Len())
	for k := range attrs.All() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, _ := attrs.Get(k)
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v.AsString())
	}
	return b.String()
}

func str(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok {
		switch v.Type() {
		case pcommon.ValueTypeStr:
			return v.Str()
		case pcommon.ValueTypeInt:
			return strconv.FormatInt(v.Int(), 10)
		}
	}
	return ""
}
