// Package countcheck checks telemetry against the counted-once rule of
// internal/accelschema (accelschema.Counting): device-scoped series exist
// once per physical device, on the device's own resource; a partition's or
// consumer's series are never repeated by its parent; the shares of one
// device add up to at most 1, and so do its allocation series (one per
// holding). Every component's tests and the end-to-end
// tests use it, so the rule is checked where it is stated, once.
package countcheck

import (
	"fmt"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-accel/otelcol-accel/internal/accelschema"
)

// shareSlack absorbs float rounding when shares are summed.
const shareSlack = 1e-6

// Violations returns one line per break of the rule, sorted; none when md
// counts every quantity once. Metrics the registry does not know are
// ignored (they are not ours to place).
func Violations(md pmetric.Metrics) []string {
	c := newChecker()
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		c.resource(rms.At(i))
	}
	return c.finish()
}

type seriesKey struct {
	metric string
	points string // the data point attributes, canonical
}

// sampleKey is one series at one time: a batch may hold several scrapes.
type sampleKey struct {
	seriesKey
	at pcommon.Timestamp
}

type shareKey struct {
	device string
	at     pcommon.Timestamp
}

type checker struct {
	out []string
	// devices: series of device-scoped metrics per physical device.
	device map[string]map[sampleKey]int
	// partition-scoped series on a device's own resource, and on resources
	// whose parent is that device.
	onParent map[string]map[seriesKey]bool
	onChild  map[string]map[seriesKey]childSeries
	// partition-scoped quantities a device's own resource reports as a
	// total (points without process.pid or accelerator.consumer.pod): its
	// partitions and copies must not report them in any form. A quantity
	// is a metric and the engine it measures (totalKey).
	parentTotals map[string]map[string]bool
	// shares per physical device and price time (a batch may hold several
	// scrapes of one device).
	shares map[shareKey]float64
	// held: the allocation series' values per physical device and time.
	held map[shareKey]float64
}

func newChecker() *checker {
	return &checker{
		device:   map[string]map[sampleKey]int{},
		onParent: map[string]map[seriesKey]bool{},
		onChild:  map[string]map[seriesKey]childSeries{},

		parentTotals: map[string]map[string]bool{},
		shares:       map[shareKey]float64{},
		held:         map[shareKey]float64{},
	}
}

func (c *checker) resource(rm pmetric.ResourceMetrics) {
	attrs := rm.Resource().Attributes()
	hwID := str(attrs, accelschema.AttrHWID)
	parent := str(attrs, accelschema.AttrHWParent)
	ident := identity(attrs)
	isDevice := accelschema.IsDeviceResource(hwID, parent)
	physical := physicalDevice(attrs, hwID, parent)
	var pricedAt []pcommon.Timestamp
	forEachPoint(rm, func(m pmetric.Metric, points pcommon.Map, at pcommon.Timestamp, value float64) {
		def, ok := accelschema.LookupMetric(m.Name())
		if !ok {
			return
		}
		key := seriesKey{m.Name(), canonical(points)}
		switch def.Counted {
		case accelschema.CountedPerDevice:
			if hwID == "" {
				c.addf("device-scoped %s on a resource without hw.id (%s)", m.Name(), ident)
				return
			}
			if !isDevice {
				c.addf("device-scoped %s on %s, which is not the device's own resource (hw.parent=%s)", m.Name(), ident, parent)
				return
			}
			set(c.device, physical)[sampleKey{key, at}]++
		case accelschema.CountedPerPartition:
			if hwID == "" {
				return
			}
			if isDevice {
				setBool(c.onParent, physical)[key] = true
				if !perConsumer(points) {
					if c.parentTotals[physical] == nil {
						c.parentTotals[physical] = map[string]bool{}
					}
					c.parentTotals[physical][totalKey(m.Name(), points)] = true
				}
			} else if _, dup := setChild(c.onChild, physical)[key]; !dup {
				c.onChild[physical][key] = childSeries{ident, totalKey(m.Name(), points)}
			}
		case accelschema.CountedPerShare:
			if m.Name() == accelschema.MetricPrice {
				pricedAt = append(pricedAt, at)
			}
		case accelschema.CountedPerHolding:
			if hwID == "" {
				c.addf("holding-scoped %s on a resource without hw.id (%s)", m.Name(), ident)
				return
			}
			c.held[shareKey{physical, at}] += value
		case accelschema.CountedPerServer, accelschema.CountedPerNode, accelschema.CountedPerWorkload:
			if hwID != "" {
				c.addf("%s-scoped %s on device resource %s", def.Counted, m.Name(), ident)
			}
		}
	})
	if v, ok := attrs.Get(accelschema.AttrPartitionShare); ok && hwID != "" {
		for _, at := range pricedAt {
			c.shares[shareKey{physical, at}] += number(v)
		}
	}
}

func (c *checker) finish() []string {
	for dev, samples := range c.device {
		worst := map[seriesKey]int{} // one line per series, not per sample
		for k, n := range samples {
			if n > worst[k.seriesKey] {
				worst[k.seriesKey] = n
			}
		}
		for k, n := range worst {
			if n > 1 {
				c.addf("device-scoped %s%s exported %d times for device %s", k.metric, k.points, n, dev)
			}
		}
	}
	for dev, series := range c.onChild {
		totalReported := map[string]bool{} // one line per quantity and device
		for k, child := range series {
			switch {
			case c.onParent[dev][k]:
				c.addf("%s%s is on device %s and again on its partition or copy %s", k.metric, k.points, dev, child.ident)
			case c.parentTotals[dev][child.total] && !totalReported[child.total]:
				totalReported[child.total] = true
				c.addf("%s is reported as a total on device %s and again by its partition or copy %s", child.total, dev, child.ident)
			}
		}
	}
	worst := map[string]float64{}
	for k, total := range c.shares {
		worst[k.device] = max(worst[k.device], total)
	}
	for dev, total := range worst {
		if total > 1+shareSlack {
			c.addf("shares of device %s add up to %.6f (> 1): it is paid for more than once", dev, total)
		}
	}
	clear(worst)
	for k, total := range c.held {
		worst[k.device] = max(worst[k.device], total)
	}
	for dev, total := range worst {
		if total > 1+shareSlack {
			c.addf("allocation series of device %s add up to %.6f (> 1): a holding is counted more than once", dev, total)
		}
	}
	sort.Strings(c.out)
	return c.out
}

func (c *checker) addf(format string, args ...any) {
	c.out = append(c.out, fmt.Sprintf(format, args...))
}

// childSeries is a partition's or copy's series: which resource, and the
// quantity it measures.
type childSeries struct {
	ident, total string
}

// totalKey names the quantity a point measures: its metric, and for
// hw.gpu.utilization the engine (hw.gpu.task). A GPU's video encoder and
// decoder are engines of the device itself, measured for the whole GPU
// (neither NVML nor dcgm-exporter reads them per pod or process); a
// time-sliced GPU keeps them on its own resource while its pods' own
// utilization of the compute engine is on their copies, and neither
// counts the other. Any other attribute (a memory category, a process)
// splits one quantity, so a total of it beside a partition's series of
// it is counted twice.
func totalKey(metric string, points pcommon.Map) string {
	if metric != accelschema.MetricGPUUtilization {
		return metric
	}
	task := accelschema.GPUTaskGeneral
	if v, ok := points.Get(accelschema.AttrHWGPUTask); ok {
		task = v.AsString()
	}
	return metric + "{" + accelschema.AttrHWGPUTask + "=" + task + "}"
}

// perConsumer: a point measured for one process or pod, which may stay on
// the device (nobody's process) while others go to copies.
func perConsumer(points pcommon.Map) bool {
	if _, ok := points.Get(accelschema.AttrProcessPID); ok {
		return true
	}
	_, ok := points.Get(accelschema.AttrConsumerPod)
	return ok
}

// physicalDevice names the device a resource belongs to: its parent's id,
// else its own, qualified by the node (Neuron ids repeat on every node).
func physicalDevice(attrs pcommon.Map, hwID, parent string) string {
	id := hwID
	if parent != "" {
		id = parent
	}
	node := str(attrs, accelschema.AttrK8sNodeName)
	if node == "" {
		node = str(attrs, accelschema.AttrHostName)
	}
	if node == "" {
		return id
	}
	return node + "/" + id
}

// identity names a resource by the attributes that tell copies and
// partitions of one device apart.
func identity(attrs pcommon.Map) string {
	parts := []string{str(attrs, accelschema.AttrHWID)}
	for _, k := range []string{accelschema.AttrPartitionType, accelschema.AttrPartitionID, accelschema.AttrK8sPodUID, accelschema.AttrK8sNamespaceName, accelschema.AttrK8sPodName, accelschema.AttrAllocationState} {
		if v := str(attrs, k); v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// pointFunc sees one point: its metric, attributes, time and, for a gauge
// or sum, its value (0 for the other shapes).
type pointFunc func(m pmetric.Metric, attrs pcommon.Map, at pcommon.Timestamp, value float64)

func forEachPoint(rm pmetric.ResourceMetrics, fn pointFunc) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			switch m.Type() {
			case pmetric.MetricTypeGauge:
				numberPoints(m, m.Gauge().DataPoints(), fn)
			case pmetric.MetricTypeSum:
				numberPoints(m, m.Sum().DataPoints(), fn)
			case pmetric.MetricTypeHistogram:
				dps := m.Histogram().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					fn(m, dps.At(k).Attributes(), dps.At(k).Timestamp(), 0)
				}
			case pmetric.MetricTypeExponentialHistogram:
				dps := m.ExponentialHistogram().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					fn(m, dps.At(k).Attributes(), dps.At(k).Timestamp(), 0)
				}
			case pmetric.MetricTypeSummary:
				dps := m.Summary().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					fn(m, dps.At(k).Attributes(), dps.At(k).Timestamp(), 0)
				}
			}
		}
	}
}

func numberPoints(m pmetric.Metric, dps pmetric.NumberDataPointSlice, fn pointFunc) {
	for k := 0; k < dps.Len(); k++ {
		dp := dps.At(k)
		v := dp.DoubleValue()
		if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
			v = float64(dp.IntValue())
		}
		fn(m, dp.Attributes(), dp.Timestamp(), v)
	}
}

func canonical(m pcommon.Map) string {
	if m.Len() == 0 {
		return ""
	}
	kv := make([]string, 0, m.Len())
	m.Range(func(k string, v pcommon.Value) bool {
		kv = append(kv, k+"="+v.AsString())
		return true
	})
	sort.Strings(kv)
	return "{" + strings.Join(kv, ",") + "}"
}

func str(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

func number(v pcommon.Value) float64 {
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return v.Double()
	case pcommon.ValueTypeInt:
		return float64(v.Int())
	}
	return 0
}

func set(m map[string]map[sampleKey]int, k string) map[sampleKey]int {
	if m[k] == nil {
		m[k] = map[sampleKey]int{}
	}
	return m[k]
}

func setBool(m map[string]map[seriesKey]bool, k string) map[seriesKey]bool {
	if m[k] == nil {
		m[k] = map[seriesKey]bool{}
	}
	return m[k]
}

func setChild(m map[string]map[seriesKey]childSeries, k string) map[seriesKey]childSeries {
	if m[k] == nil {
		m[k] = map[seriesKey]childSeries{}
	}
	return m[k]
}
