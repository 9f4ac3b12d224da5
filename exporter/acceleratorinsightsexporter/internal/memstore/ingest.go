package memstore

import (
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/exporter/acceleratorinsightsexporter/internal/fleet"
	s "github.com/otelcol-accel/otelcol-accel/internal/accelschema"
	"github.com/otelcol-accel/otelcol-accel/internal/pmetricutil"
	"github.com/otelcol-accel/otelcol-accel/internal/xid"
)

// identityIndex maps an identity attribute to its position in
// fleet.IdentityKeys, so a resource's attributes are read in one pass.
var identityIndex = func() map[string]int {
	m := make(map[string]int, len(fleet.IdentityKeys))
	for i, k := range fleet.IdentityKeys {
		m[k] = i
	}
	return m
}()

func identityOf(attrs pcommon.Map) fleet.Identity {
	var vals [32]string
	attrs.Range(func(k string, v pcommon.Value) bool {
		if i, ok := identityIndex[k]; ok {
			if v.Type() == pcommon.ValueTypeStr {
				vals[i] = v.Str()
			} else {
				vals[i] = v.AsString()
			}
		}
		return true
	})
	return fleet.IdentityFrom(func(key string) string { return vals[identityIndex[key]] })
}

// Ingested is what became of a batch's data points.
type Ingested struct {
	// Modelled: points of metrics the console shows (device charts,
	// hw.status, memory limits, price, waste, inference servers, MPS).
	Modelled int
	// Dropped: modelled points a chart refused, older than its newest.
	Dropped int
	// Ignored: points of metrics the console does not show.
	Ignored int
}

// Consume adds a batch of metrics to the model.
func (st *Store) Consume(md pmetric.Metrics) Ingested {
	now := st.now()
	nowMS := now.UnixMilli()
	st.mu.Lock()
	defer st.mu.Unlock()
	defer st.version.Add(1)
	st.ingested = Ingested{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		attrs := rm.Resource().Attributes()
		hwID, hasHW := attrs.Get(s.AttrHWID)
		switch {
		case hasHW && hwID.Str() != "":
			st.consumeDevice(rm, identityOf(attrs), nowMS)
		default:
			st.consumeOther(rm, attrs, nowMS)
		}
	}
	st.sweep(nowMS)
	return Ingested{Modelled: st.ingested.Modelled, Dropped: st.ingested.Dropped, Ignored: md.DataPointCount() - st.ingested.Modelled - st.ingested.Dropped}
}

func (st *Store) consumeDevice(rm pmetric.ResourceMetrics, id fleet.Identity, nowMS int64) {
	k := resourceKey{id.Node, id.HWID, id.PartitionType, id.PartitionID, id.HolderKey()}
	r := st.resources[k]
	if r == nil {
		r = &resource{}
		st.resources[k] = r
	}
	r.id, r.lastSeen = id, nowMS
	var rep errorReport
	sms := rm.ScopeMetrics()
	for j := 0; j < sms.Len(); j++ {
		ms := sms.At(j).Metrics()
		for m := 0; m < ms.Len(); m++ {
			st.deviceMetric(r, ms.At(m), &rep)
		}
	}
	// After the batch's hw.status: a count that grew in the batch that
	// says the device is ok again is no cause.
	if rep.reported {
		r.errors.Observe(rep.at, rep.counts, id.Kind == s.KindAWSNeuron, r.health == s.HWStateOK)
	}
}

// errorReport is a batch's hw.status and hw.errors of one device, read by
// the device's xid.ErrorWatch.
type errorReport struct {
	reported bool
	at       time.Time
	counts   []xid.ErrorCount
}

func (rep *errorReport) saw(p pmetric.NumberDataPoint) {
	rep.reported = true
	if t := p.Timestamp().AsTime(); t.After(rep.at) {
		rep.at = t
	}
}

// chartOf is the chart slot of a metric, -1 for none.
func chartOf(name string) int {
	switch name {
	case s.MetricGPUUtilization:
		return chartUtilization
	case s.MetricGPUMemoryUsage:
		return chartMemoryUsed
	case s.MetricGPUMemoryUtilization:
		return chartMemoryUtilization
	case s.MetricPower:
		return chartPower
	case s.MetricTemperature:
		return chartTemperature
	case s.MetricSMActive:
		return chartSMActive
	case s.MetricSMOccupancy:
		return chartSMOccupancy
	case s.MetricTensorActive:
		return chartTensorActive
	case s.MetricDRAMActive:
		return chartDRAMActive
	case s.MetricGREngineActive:
		return chartGREngine
	}
	return -1
}

// numberPoints returns a gauge's or sum's points.
func numberPoints(m pmetric.Metric) (pmetric.NumberDataPointSlice, bool) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints(), true
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints(), true
	}
	return pmetric.NumberDataPointSlice{}, false
}

func value(p pmetric.NumberDataPoint) float64 {
	if p.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(p.IntValue())
	}
	return p.DoubleValue()
}

// pointKind says whether a point counts for the resource's chart: measured
// for the resource itself, or for one process on it (fleet.Reading decides
// which wins); not for a pod on a shared device that holds no share of it,
// nor for an encoder or decoder.
func pointKind(a pcommon.Map) (counts, perProcess bool) {
	if a.Len() == 0 {
		return true, false
	}
	if _, ok := a.Get(s.AttrConsumerPod); ok {
		return false, false
	}
	if t, ok := a.Get(s.AttrHWGPUTask); ok && t.Str() != s.GPUTaskGeneral {
		return false, false
	}
	_, pid := a.Get(s.AttrProcessPID)
	return true, pid
}

func (st *Store) deviceMetric(r *resource, m pmetric.Metric, rep *errorReport) {
	name := m.Name()
	pts, ok := numberPoints(m)
	if !ok || pts.Len() == 0 {
		return
	}
	switch name {
	case s.MetricStatus, s.MetricErrors, s.MetricGPUMemoryLimit, s.MetricPartitionMemoryLimit, s.MetricPrice, s.MetricWaste:
		st.ingested.Modelled += pts.Len()
	}
	switch name {
	case s.MetricErrors:
		for i := 0; i < pts.Len(); i++ {
			p := pts.At(i)
			rep.saw(p)
			c := xid.ErrorCount{Type: str(p.Attributes(), s.AttrErrorType), Count: value(p)}
			if v, ok := p.Attributes().Get(s.AttrXID); ok && v.Type() == pcommon.ValueTypeInt {
				c.XID = int(v.Int())
			}
			rep.counts = append(rep.counts, c)
		}
		return
	case s.MetricStatus:
		for i := 0; i < pts.Len(); i++ {
			p := pts.At(i)
			rep.saw(p)
			if value(p) == 1 {
				if v, ok := p.Attributes().Get(s.AttrHWState); ok {
					r.health = v.Str()
				}
			}
		}
		return
	case s.MetricGPUMemoryLimit, s.MetricPartitionMemoryLimit:
		p := pts.At(pts.Len() - 1)
		r.memLimit, r.hasLimit = value(p), true
		return
	case s.MetricPrice:
		p := pts.At(pts.Len() - 1)
		r.price, r.hasPrice = value(p), true
		return
	case s.MetricWaste:
		delta := m.Type() == pmetric.MetricTypeSum && m.Sum().AggregationTemporality() == pmetric.AggregationTemporalityDelta
		for i := 0; i < pts.Len(); i++ {
			p := pts.At(i)
			reason := ""
			if v, ok := p.Attributes().Get(s.AttrWasteReason); ok {
				reason = v.Str()
			}
			if r.waste == nil {
				r.waste = map[string]*counterRing{}
			}
			c := r.waste[reason]
			if c == nil {
				c = &counterRing{}
				r.waste[reason] = c
			}
			c.add(p.Timestamp().AsTime().UnixMilli(), cumulative(c, value(p), delta), st.rateStepMS)
		}
		return
	}
	slot := chartOf(name)
	if slot < 0 {
		return
	}
	// Several points of one metric become one sample (fleet.Reading).
	reading := fleet.Reading{Chart: fleet.Charts[slot].Name}
	var ts pcommon.Timestamp
	for i := 0; i < pts.Len(); i++ {
		p := pts.At(i)
		counts, perProcess := pointKind(p.Attributes())
		if !counts {
			continue
		}
		reading.Add(value(p), perProcess)
		ts = max(ts, p.Timestamp())
	}
	v, ok := reading.Value()
	if !ok {
		return
	}
	c := r.charts[slot]
	if c == nil {
		c = newChartRing(st.cfg.PointsPerSeries)
		r.charts[slot] = c
	}
	if c.add(uint32(ts.AsTime().Unix()), v, st.stepSec) {
		st.ingested.Modelled += pts.Len()
	} else {
		st.ingested.Dropped += pts.Len()
	}
	r.last[slot] = v
}

// cumulative turns a delta sample into a running total.
func cumulative(c *counterRing, v float64, delta bool) float64 {
	if !delta || c.n == 0 {
		return v
	}
	return c.v[(c.head-1+counterSamples)%counterSamples] + v
}

// consumeOther reads inference servers and MPS daemons (resources
// without hw.id).
func (st *Store) consumeOther(rm pmetric.ResourceMetrics, attrs pcommon.Map, nowMS int64) {
	sms := rm.ScopeMetrics()
	var srv *server
	for j := 0; j < sms.Len(); j++ {
		ms := sms.At(j).Metrics()
		for m := 0; m < ms.Len(); m++ {
			metric := ms.At(m)
			name := metric.Name()
			switch {
			case strings.HasPrefix(name, "gen_ai.server."):
				st.ingested.Modelled += pmetricutil.PointCount(metric)
				if srv == nil {
					srv = st.serverFor(attrs, nowMS)
				}
				st.serverMetric(srv, metric)
			case name == s.MetricMPSDaemonUp || name == s.MetricMPSServers || name == s.MetricMPSActiveThreads:
				st.ingested.Modelled += pmetricutil.PointCount(metric)
				st.mpsMetric(attrs, metric, nowMS)
			}
		}
	}
}

func str(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok {
		if v.Type() == pcommon.ValueTypeStr {
			return v.Str()
		}
		return v.AsString()
	}
	return ""
}

func (st *Store) serverFor(attrs pcommon.Map, nowMS int64) *server {
	sv := fleet.ServerOf(func(k string) string { return str(attrs, k) })
	k := serverKey{sv.Endpoint, sv.Model, sv.PodUID, sv.Namespace + "/" + sv.Pod}
	srv := st.servers[k]
	if srv == nil {
		srv = &server{}
		st.servers[k] = srv
	}
	srv.sv, srv.lastSeen = sv, nowMS
	return srv
}

func (st *Store) serverMetric(srv *server, m pmetric.Metric) {
	name := m.Name()
	if m.Type() == pmetric.MetricTypeHistogram {
		slot := -1
		switch name {
		case s.MetricTimeToFirstToken:
			slot = histTTFT
		case s.MetricInterTokenLatency:
			slot = histITL
		case s.MetricTimePerOutputToken:
			slot = histTPOT
		case s.MetricRequestDuration:
			slot = histE2E
		}
		pts := m.Histogram().DataPoints()
		if slot < 0 || pts.Len() == 0 {
			return
		}
		p := pts.At(pts.Len() - 1)
		if p.BucketCounts().Len() != p.ExplicitBounds().Len()+1 {
			return // a bucketless histogram (sum and count only) has no percentiles
		}
		counts := make([]float64, p.BucketCounts().Len())
		for i := range counts {
			counts[i] = float64(p.BucketCounts().At(i))
		}
		h := srv.hists[slot]
		if h == nil {
			h = &histRing{}
			srv.hists[slot] = h
		}
		h.add(p.Timestamp().AsTime().UnixMilli(), p.ExplicitBounds().AsRaw(), counts, st.rateStepMS)
		return
	}
	pts, ok := numberPoints(m)
	if !ok || pts.Len() == 0 {
		return
	}
	gauge := -1
	switch name {
	case s.MetricRequestsRunning:
		gauge = gaugeRunning
	case s.MetricRequestsWaiting:
		gauge = gaugeWaiting
	case s.MetricKVCacheUtilization:
		gauge = gaugeKV
	case s.MetricPrefixCacheHitRatio:
		gauge = gaugePrefix
	}
	if gauge >= 0 {
		v := value(pts.At(pts.Len() - 1))
		srv.gauges[gauge] = &v
		return
	}
	delta := m.Type() == pmetric.MetricTypeSum && m.Sum().AggregationTemporality() == pmetric.AggregationTemporalityDelta
	add := func(slot int, v float64, ts pcommon.Timestamp) {
		c := srv.counters[slot]
		if c == nil {
			c = &counterRing{}
			srv.counters[slot] = c
		}
		c.add(ts.AsTime().UnixMilli(), cumulative(c, v, delta), st.rateStepMS)
	}
	switch name {
	case s.MetricRequests, s.MetricPreemptions:
		// Summed over finish reasons: the rate of the sum.
		var total float64
		var ts pcommon.Timestamp
		for i := 0; i < pts.Len(); i++ {
			total += value(pts.At(i))
			ts = max(ts, pts.At(i).Timestamp())
		}
		slot := counterRequests
		if name == s.MetricPreemptions {
			slot = counterPreemptions
		}
		add(slot, total, ts)
	case s.MetricTokens:
		for i := 0; i < pts.Len(); i++ {
			p := pts.At(i)
			switch str(p.Attributes(), s.AttrTokenType) {
			case s.TokenInput:
				add(counterInputTokens, value(p), p.Timestamp())
			case s.TokenOutput:
				add(counterOutputTokens, value(p), p.Timestamp())
			}
		}
	}
}

func (st *Store) mpsMetric(attrs pcommon.Map, m pmetric.Metric, nowMS int64) {
	pts, ok := numberPoints(m)
	if !ok || pts.Len() == 0 {
		return
	}
	id := identityOf(attrs)
	x := st.mps[id.Node]
	if x == nil {
		x = &mpsState{}
		st.mps[id.Node] = x
	}
	x.m.Node, x.m.Cluster, x.lastSeen = id.Node, id.Cluster, nowMS
	v := value(pts.At(pts.Len() - 1))
	switch m.Name() {
	case s.MetricMPSDaemonUp:
		up := v == 1
		x.m.Up = &up
	case s.MetricMPSServers:
		x.m.Servers = &v
	case s.MetricMPSActiveThreads:
		x.m.ActiveThreads = &v
	}
}
